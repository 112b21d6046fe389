#include "core/owners.h"

#include <vector>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

Owner At(PathId path, ModuleId module) { return Owner{path, module, OwnerKind::kModel, nullptr, nullptr, {}, {}, {}}; }

// A family replacing a model provider removes its entry: the owners keep
// insertion order without it, and Take moves them out in that order.
TEST(OwnersTest, TakeMovesTheLiveEntriesOutInInsertionOrder) {
  Owners owners(4);
  owners.Add(At(10, 0));
  owners.Add(At(11, 1));
  owners.Add(At(12, 2));
  owners.Remove(1);
  Owner family = At(13, 1);
  family.required = {7, 8};
  owners.Add(std::move(family));
  ASSERT_EQ(owners.InOrder().size(), 3u);

  const std::vector<Owner> taken = owners.Take();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].path, 10u);
  EXPECT_EQ(taken[1].path, 12u);
  EXPECT_EQ(taken[2].path, 13u);
  EXPECT_EQ(taken[2].required, (SmallVector<ParamId>{7, 8}));
  EXPECT_TRUE(owners.InOrder().empty());
  EXPECT_FALSE(owners.Has(0));
  EXPECT_EQ(owners.Find(1), nullptr);
}

}  // namespace
}  // namespace shardplan

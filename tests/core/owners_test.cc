#include "core/owners.h"

#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A family replacing a model provider removes its entry: the owners keep
// insertion order without it, and Take moves them out in that order.
TEST(OwnersTest, TakeMovesTheLiveEntriesOutInInsertionOrder) {
  Owners owners(4);
  owners.Add(10, 0);
  owners.Add(11, 1);
  owners.Add(12, 2);
  const std::vector<const Owner*> before = std::as_const(owners).InOrder();
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[1]->path, 11u);
  owners.Remove(1);
  EXPECT_EQ(owners.size(), 2u);
  owners.Add(13, 1).required = {7, 8};
  EXPECT_EQ(owners.size(), 3u);
  std::vector<PathId> live;
  for (const Owner* o : owners.InOrder()) live.push_back(o->path);
  EXPECT_EQ(live, (std::vector<PathId>{10, 12, 13}));

  const std::vector<Owner> taken = owners.Take();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].path, 10u);
  EXPECT_EQ(taken[1].path, 12u);
  EXPECT_EQ(taken[2].path, 13u);
  EXPECT_EQ(taken[2].required, (SmallVector<ParamId>{7, 8}));
  EXPECT_TRUE(owners.InOrder().empty());
  EXPECT_EQ(owners.size(), 0u);
  EXPECT_FALSE(owners.Has(0));
  EXPECT_EQ(owners.Find(1), nullptr);
}

// An entry added in place starts out unclaimed and empty, and is the one
// Find returns for its module.
TEST(OwnersTest, AnEntryAddedInPlaceIsFreshAndFound) {
  Owners owners(3);
  Owner& entry = owners.Add(5, 2);
  EXPECT_EQ(entry.path, 5u);
  EXPECT_EQ(entry.module, 2u);
  EXPECT_EQ(entry.declared, Owner::kNotClaimed);
  EXPECT_FALSE(entry.derived_out_names.has_value());
  EXPECT_TRUE(entry.dropped.empty() && entry.required.empty());
  entry.kind = OwnerKind::kNative;
  EXPECT_EQ(owners.Find(2), &entry);
  EXPECT_EQ(owners.Find(2)->kind, OwnerKind::kNative);
  EXPECT_TRUE(owners.Has(2));
  EXPECT_FALSE(owners.Has(1));
}

}  // namespace
}  // namespace shardplan

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
  owners.Add(13, 1).declared = 7;
  EXPECT_EQ(owners.size(), 3u);
  std::vector<PathId> live;
  for (const Owner* o : owners.InOrder()) live.push_back(o->path);
  EXPECT_EQ(live, (std::vector<PathId>{10, 12, 13}));

  const std::vector<Owner> taken = owners.Take();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].path, 10u);
  EXPECT_EQ(taken[1].path, 12u);
  EXPECT_EQ(taken[2].path, 13u);
  EXPECT_EQ(taken[2].declared, 7u);
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
  EXPECT_EQ(entry.binding_kind, kNoName);
  EXPECT_EQ(entry.declared, Owner::kNotClaimed);
  entry.kind = OwnerKind::kNative;
  EXPECT_EQ(owners.Find(2), &entry);
  EXPECT_EQ(owners.Find(2)->kind, OwnerKind::kNative);
  EXPECT_TRUE(owners.Has(2));
  EXPECT_FALSE(owners.Has(1));
}

// Output normalization: a layout's own out_names win; without them, its
// output ports are named in out_src then out_dst order, each once; without
// output ports there are none.
TEST(OwnersTest, NormalizedOutNamesDeriveTheOutputPortsInOrder) {
  MapStore maps;
  auto ports = [&](std::vector<NameId> names) {
    PlacementMap map;
    for (NameId n : names) map.push_back(PlacementEntry{n, {}});
    return maps.Intern(std::move(map));
  };
  Layout layout;
  EXPECT_FALSE(NormalizedOutNames(layout).has_value());
  layout.out_src = ports({});
  EXPECT_FALSE(NormalizedOutNames(layout).has_value());
  layout.out_src = ports({7, 3});
  layout.out_dst = ports({3, 9});
  EXPECT_EQ(NormalizedOutNames(layout), (SmallVector<NameId>{7, 3, 9}));
  layout.out_src = MapRef();
  EXPECT_EQ(NormalizedOutNames(layout), (SmallVector<NameId>{3, 9}));
  layout.out_names = SmallVector<NameId>{4};
  EXPECT_EQ(NormalizedOutNames(layout), (SmallVector<NameId>{4}));
}

}  // namespace
}  // namespace shardplan

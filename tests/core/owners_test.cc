#include "core/ownership/owners.h"

#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A family replacing a model provider removes its entry: once compacted,
// the owners keep insertion order without it, Find still finds each, and
// Take moves them out in that order.
TEST(OwnersTest, TakeMovesTheLiveEntriesOutInInsertionOrder) {
  Owners owners(4);
  owners.Add(10, 0, nullptr, nullptr);
  owners.Add(11, 1, nullptr, nullptr);
  owners.Add(12, 2, nullptr, nullptr);
  const absl::Span<const Owner> before = std::as_const(owners).InOrder();
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[1].path, 11u);
  owners.Remove(1);
  EXPECT_EQ(owners.size(), 2u);
  EXPECT_FALSE(owners.Has(1));
  owners.Add(13, 1, nullptr, nullptr);
  EXPECT_EQ(owners.size(), 3u);
  owners.Compact();
  std::vector<PathId> live;
  for (const Owner& o : owners.InOrder()) live.push_back(o.path);
  EXPECT_EQ(live, (std::vector<PathId>{10, 12, 13}));
  EXPECT_EQ(owners.Find(0)->path, 10u);
  EXPECT_EQ(owners.Find(2)->path, 12u);
  EXPECT_EQ(owners.Find(1)->path, 13u);

  const std::vector<Owner> taken = owners.Take();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].path, 10u);
  EXPECT_EQ(taken[1].path, 12u);
  EXPECT_EQ(taken[2].path, 13u);
  EXPECT_TRUE(owners.InOrder().empty());
  EXPECT_EQ(owners.size(), 0u);
  EXPECT_FALSE(owners.Has(0));
  EXPECT_EQ(owners.Find(1), nullptr);
}

// An added entry starts out unclaimed, with the layout and spec it was
// given.
TEST(OwnersTest, AddedEntriesKeepWhatTheyWereGiven) {
  const Layout layout;
  const ParallelSpec spec{};
  Owners owners(3);
  owners.Add(5, 2, &layout, &spec);
  const Owner* owner = owners.Find(2);
  ASSERT_NE(owner, nullptr);
  EXPECT_EQ(owner->path, 5u);
  EXPECT_EQ(owner->declared, Owner::kNotClaimed);
  EXPECT_EQ(owner->layout, &layout);
  EXPECT_EQ(owner->parallel, &spec);
  EXPECT_FALSE(owners.Has(0));
}

// Output normalization: a layout's own out_names win; without them, its
// output ports are named in out_src then out_dst order, each once; without
// output ports there are none.
TEST(OwnersTest, NormalizedOutNamesDeriveTheOutputPortsInOrder) {
  MapStore maps;
  auto ports = [&](std::vector<NameId> names) {
    PlacementMap map;
    for (NameId n : names) map.emplace_back().name = n;
    return maps.Intern(std::move(map));
  };
  LayoutBody body;
  auto normalized = [&] { return NormalizedOutNames(Layout{maps.Intern(body), {}}); };
  EXPECT_FALSE(normalized().has_value());
  body.out_src = ports({});
  EXPECT_FALSE(normalized().has_value());
  body.out_src = ports({7, 3});
  body.out_dst = ports({3, 9});
  EXPECT_EQ(normalized(), (SmallVector<NameId>{7, 3, 9}));
  body.out_src = MapRef();
  EXPECT_EQ(normalized(), (SmallVector<NameId>{3, 9}));
  body.out_names = SmallVector<NameId>{4};
  EXPECT_EQ(normalized(), (SmallVector<NameId>{4}));
}

}  // namespace
}  // namespace shardplan

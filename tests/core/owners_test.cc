#include "core/owners.h"

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
  owners.Reserve(10, 0);
  owners.Reserve(11, 1);
  owners.Reserve(12, 2);
  owners.AddReserved([](size_t, Owner&) {});
  const absl::Span<const Owner> before = std::as_const(owners).InOrder();
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[1].path, 11u);
  owners.Remove(1);
  EXPECT_EQ(owners.size(), 2u);
  owners.Reserve(13, 1);
  owners.AddReserved([](size_t, Owner& o) { o.declared = 7; });
  EXPECT_EQ(owners.size(), 3u);
  owners.Compact();
  std::vector<PathId> live;
  for (const Owner& o : owners.InOrder()) live.push_back(o.path);
  EXPECT_EQ(live, (std::vector<PathId>{10, 12, 13}));
  EXPECT_EQ(owners.Find(0)->path, 10u);
  EXPECT_EQ(owners.Find(2)->path, 12u);
  EXPECT_EQ(owners.Find(1)->path, 13u);
  EXPECT_EQ(owners.Find(1)->declared, 7u);

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

// Reserving places an entry in insertion order at once (Has); AddReserved
// then writes every reserved entry, k-th reserved k-th, starting out
// unclaimed, and Find returns it for its module.
TEST(OwnersTest, ReservedEntriesAreWrittenInReservationOrder) {
  Owners owners(4);
  owners.Reserve(5, 2);
  owners.Reserve(6, 0);
  EXPECT_TRUE(owners.Has(2));
  EXPECT_TRUE(owners.Has(0));
  EXPECT_FALSE(owners.Has(1));
  owners.AddReserved([](size_t k, Owner& o) {
    EXPECT_EQ(o.declared, Owner::kNotClaimed);
    o.declared = static_cast<uint32_t>(k);
  });
  ASSERT_NE(owners.Find(2), nullptr);
  EXPECT_EQ(owners.Find(2)->path, 5u);
  EXPECT_EQ(owners.Find(2)->declared, 0u);
  EXPECT_EQ(owners.Find(0)->path, 6u);
  EXPECT_EQ(owners.Find(0)->declared, 1u);
  EXPECT_EQ(owners.size(), 2u);
  // A second batch goes after the first.
  owners.Reserve(7, 3);
  owners.AddReserved([](size_t k, Owner&) { EXPECT_EQ(k, 0u); });
  std::vector<PathId> paths;
  for (const Owner& o : std::as_const(owners).InOrder()) paths.push_back(o.path);
  EXPECT_EQ(paths, (std::vector<PathId>{5, 6, 7}));
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

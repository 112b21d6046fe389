#include "core/document.h"

#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A map of entries (name, [(axis, placement)]) with names and axes as ids.
PlacementMap Map(const std::vector<std::pair<NameId, std::vector<std::pair<NameId, std::string_view>>>>& entries) {
  PlacementMap map;
  for (const auto& [name, placements] : entries) {
    PlacementEntry& e = map.emplace_back();
    e.name = name;
    for (const auto& [axis, text] : placements) e.placements.push_back({axis, *ParsePlacement(text)});
  }
  return map;
}

TEST(MapStoreTest, EqualMapsAreStoredOnce) {
  MapStore store;
  const MapRef a = store.Intern(Map({{1, {{7, "S(0)"}, {8, "R"}}}, {2, {}}}));
  const MapRef b = store.Intern(Map({{1, {{7, "S(0)"}, {8, "R"}}}, {2, {}}}));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(&*a, &*b);
  EXPECT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].placements[0].placement, *ParsePlacement("S(0)"));
  // P is P(sum): the same placement, spelled the same in results.
  EXPECT_EQ(&*store.Intern(Map({{1, {{7, "P"}}}})), &*store.Intern(Map({{1, {{7, "P(sum)"}}}})));
}

TEST(MapStoreTest, MapsThatDifferInAnyWayAreKeptApart) {
  MapStore store;
  const PlacementMap base = Map({{1, {{7, "S(0)"}, {8, "R"}}}, {2, {{7, "R"}}}});
  const std::vector<PlacementMap> others = {
      Map({{2, {{7, "R"}}}, {1, {{7, "S(0)"}, {8, "R"}}}}),  // entry order
      Map({{1, {{8, "R"}, {7, "S(0)"}}}, {2, {{7, "R"}}}}),  // axis order within an entry
      Map({{1, {{7, "S(1)"}, {8, "R"}}}, {2, {{7, "R"}}}}),  // dim
      Map({{1, {{7, "S(0)"}, {8, "P"}}}, {2, {{7, "R"}}}}),  // kind
      Map({{1, {{7, "S(0)"}, {8, "R"}}}, {3, {{7, "R"}}}}),  // name
      Map({{1, {{7, "S(0)"}, {9, "R"}}}, {2, {{7, "R"}}}}),  // axis
      Map({{1, {{7, "S(0)"}, {8, "R"}}}}),                   // fewer entries
      Map({{1, {{7, "S(0)"}}}, {2, {{7, "R"}}}}),            // fewer placements
      Map({}),                                               // empty
  };
  const PlacementMap* stored = &*store.Intern(base);
  for (const PlacementMap& other : others) EXPECT_NE(&*store.Intern(other), stored);
  EXPECT_NE(&*store.Intern(Map({{1, {{7, "P(max)"}}}})), &*store.Intern(Map({{1, {{7, "P(min)"}}}})));
  EXPECT_FALSE(MapRef());
}

TEST(MapStoreTest, AStoreKeepsItsBaseAlive) {
  auto base = std::make_shared<MapStore>();
  const MapRef ref = base->Intern(Map({{1, {{7, "S(-1)"}}}}));
  MapStore copy(std::move(base));
  // `ref` points into the base store, which only `copy` holds now.
  EXPECT_EQ((*ref)[0].placements[0].placement, *ParsePlacement("S(-1)"));
  EXPECT_TRUE(copy.Intern(Map({{1, {{7, "S(-1)"}}}})));
}

// A layout copied (the planner copies the owner's) owns its out_names: a
// change to the copy leaves the original as it was. Absent and empty differ.
TEST(OptionalNamesTest, CopiesOwnTheirNamesAndCompareByValue) {
  Layout a;
  EXPECT_FALSE(a.out_names);
  a.out_names = SmallVector<NameId>{4, 5};
  Layout b = a;
  ASSERT_TRUE(b.out_names);
  EXPECT_NE(b.out_names.get(), a.out_names.get());
  EXPECT_TRUE(a.out_names == b.out_names);
  b.out_names->push_back(6);
  EXPECT_EQ(*a.out_names, (SmallVector<NameId>{4, 5}));
  EXPECT_FALSE(a.out_names == b.out_names);
  a = b;
  EXPECT_EQ(*a.out_names, (SmallVector<NameId>{4, 5, 6}));

  Layout none, empty;
  empty.out_names.emplace();
  EXPECT_TRUE(empty.out_names.has_value());
  EXPECT_TRUE(empty.out_names->empty());
  EXPECT_FALSE(none.out_names == empty.out_names);
  EXPECT_TRUE(none.out_names == Layout().out_names);
  b.out_names = std::nullopt;
  EXPECT_FALSE(b.out_names);
  EXPECT_FALSE(a.out_names == b.out_names);
}

}  // namespace
}  // namespace shardplan

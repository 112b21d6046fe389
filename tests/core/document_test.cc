#include "core/model/document.h"

#include <algorithm>
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

// A layout body copied (the planner copies the owner's) owns its out_names:
// a change to the copy leaves the original as it was. Absent and empty
// differ.
TEST(OptionalNamesTest, CopiesOwnTheirNamesAndCompareByValue) {
  LayoutBody a;
  EXPECT_FALSE(a.out_names);
  a.out_names = SmallVector<NameId>{4, 5};
  LayoutBody b = a;
  ASSERT_TRUE(b.out_names);
  EXPECT_NE(b.out_names.get(), a.out_names.get());
  EXPECT_TRUE(a.out_names == b.out_names);
  b.out_names->push_back(6);
  EXPECT_EQ(*a.out_names, (SmallVector<NameId>{4, 5}));
  EXPECT_FALSE(a.out_names == b.out_names);
  a = b;
  EXPECT_EQ(*a.out_names, (SmallVector<NameId>{4, 5, 6}));

  LayoutBody none, empty;
  empty.out_names.emplace();
  EXPECT_TRUE(empty.out_names.has_value());
  EXPECT_TRUE(empty.out_names->empty());
  EXPECT_FALSE(none.out_names == empty.out_names);
  EXPECT_TRUE(none.out_names == Layout().out_names());
  b.out_names = std::nullopt;
  EXPECT_FALSE(b.out_names);
  EXPECT_FALSE(a.out_names == b.out_names);
}

// Layouts that say the same share one stored body, whatever their origin;
// a body differing in any field (a map, out_names present or not, the
// legacy field) is stored apart.
TEST(MapStoreTest, EqualLayoutBodiesAreStoredOnce) {
  MapStore store;
  const MapRef x = store.Intern(Map({{1, {{7, "S(0)"}}}})), y = store.Intern(Map({{2, {}}}));
  LayoutBody body;
  body.params = x;
  body.in_src = y;
  body.in_dst = y;
  const LayoutBody* stored = store.Intern(body);
  EXPECT_EQ(store.Intern(body), stored);
  EXPECT_EQ(stored->params.get(), x.get());
  EXPECT_EQ(stored->in_dst.get(), y.get());

  std::vector<LayoutBody> others(5, body);
  others[0].in_dst = x;
  others[1].out_src = y;
  others[2].out_names.emplace();
  others[3].out_names = SmallVector<NameId>{3};
  others[4].legacy_field = 9;
  std::vector<const LayoutBody*> seen = {stored};
  for (const LayoutBody& other : others) {
    const LayoutBody* s = store.Intern(other);
    EXPECT_EQ(std::count(seen.begin(), seen.end(), s), 0);
    seen.push_back(s);
  }
  LayoutBody names_again = body;
  names_again.out_names = SmallVector<NameId>{3};
  EXPECT_EQ(store.Intern(names_again), seen[4]);
}

}  // namespace
}  // namespace shardplan

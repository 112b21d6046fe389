#include "core/model/placement.h"

#include "gtest/gtest.h"

namespace shardplan {
namespace {

std::string RoundTrip(std::string_view text) {
  std::optional<Placement> p = ParsePlacement(text);
  return p ? FormatPlacement(*p) : "<invalid>";
}

TEST(PlacementTest, CanonicalSpellingsRoundTrip) {
  EXPECT_EQ(RoundTrip("R"), "R");
  EXPECT_EQ(RoundTrip("P"), "P");
  EXPECT_EQ(RoundTrip("S(0)"), "S(0)");
  EXPECT_EQ(RoundTrip("S(-1)"), "S(-1)");
  EXPECT_EQ(RoundTrip("P(max)"), "P(max)");
  EXPECT_EQ(RoundTrip("P(avg)"), "P(avg)");
}

TEST(PlacementTest, PartialSumIsPlainPartial) {
  EXPECT_EQ(RoundTrip("P(sum)"), "P");
  EXPECT_EQ(*ParsePlacement("P(sum)"), *ParsePlacement("P"));
  EXPECT_NE(*ParsePlacement("P(max)"), *ParsePlacement("P"));
}

TEST(PlacementTest, MalformedSpellingsAreRefused) {
  for (std::string_view bad : {"", "r", "S", "S()", "S(x)", "S(1", "S(1)x", "P()", "P(mean)", "Shard(0)",
                               "S( 1)", "S(99999999999)"}) {
    EXPECT_FALSE(ParsePlacement(bad).has_value()) << bad;
  }
}

TEST(PlacementTest, NamedPlacementsCompareAsMaps) {
  Interner names;
  const NameId tp = names.Intern("tp"), dp = names.Intern("dp");
  const Placement s0 = *ParsePlacement("S(0)"), r = *ParsePlacement("R");
  EXPECT_TRUE(SamePlacements({{tp, s0}, {dp, r}}, {{dp, r}, {tp, s0}}));
  EXPECT_FALSE(SamePlacements({{tp, s0}}, {{tp, s0}, {dp, r}}));
  EXPECT_FALSE(SamePlacements({{tp, s0}}, {{tp, r}}));
  EXPECT_FALSE(SamePlacements({{tp, s0}}, {{dp, s0}}));
  EXPECT_TRUE(SamePlacements({}, {}));
}

}  // namespace
}  // namespace shardplan

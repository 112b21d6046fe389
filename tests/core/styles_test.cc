#include "core/planning/styles.h"

#include <string>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

std::string Spell(const std::optional<Placement>& p) { return p ? FormatPlacement(*p) : "-"; }
std::string Spell(const std::optional<StylePlacements::Transition>& t) {
  return t ? FormatPlacement(t->first) + "->" + FormatPlacement(t->second) : "-";
}
// One row of the spec's table: weight | bias | in | out.
std::string Row(Style style, bool embedding = false) {
  const StylePlacements p = PlacementsOf(style, embedding);
  return Spell(p.weight) + " | " + Spell(p.bias) + " | " + Spell(p.in) + " | " + Spell(p.out);
}

TEST(StylesTest, EveryNameRoundTrips) {
  int count = 0;
  for (int s = 0; s <= static_cast<int>(Style::kMoeTpExperts); ++s, ++count) {
    const Style style = static_cast<Style>(s);
    EXPECT_EQ(ParseStyle(StyleName(style)), style) << StyleName(style);
  }
  EXPECT_EQ(count, 13);
  EXPECT_EQ(ParseStyle("Colwise"), std::nullopt);
  EXPECT_EQ(ParseStyle("local_colwise"), std::nullopt);
}

TEST(StylesTest, TableMatchesTheSpec) {
  EXPECT_EQ(Row(Style::kColwise), "S(-2) | S(-1) | R->R | S(-1)->S(-1)");
  EXPECT_EQ(Row(Style::kColwise, true), "S(-1) | S(-1) | R->R | S(-1)->S(-1)");
  EXPECT_EQ(Row(Style::kColwiseGatherOutput), "S(-2) | S(-1) | R->R | S(-1)->R");
  EXPECT_EQ(Row(Style::kRowwise), "S(-1) | R | S(-1)->S(-1) | P->R");
  EXPECT_EQ(Row(Style::kRowwise, true), "S(-2) | R | R->R | P->R");
  EXPECT_EQ(Row(Style::kRowwiseSplitInput), "S(-1) | R | R->S(-1) | P->R");
  EXPECT_EQ(Row(Style::kEmbeddingRowwise), "S(-2) | - | R->R | P->R");
  EXPECT_EQ(Row(Style::kEmbeddingColwise), "S(-1) | - | R->R | S(-1)->R");
  EXPECT_EQ(Row(Style::kPackedColwise), "S(-2) | S(-1) | R->R | S(-1)->S(-1)");
  EXPECT_EQ(Row(Style::kReplicate), "R | R | - | -");
  EXPECT_EQ(Row(Style::kReplicatedWithGradAllreduce), "R | R | - | -");
  EXPECT_EQ(Row(Style::kSequenceParallel), "R | R | S(1)->S(1) | S(1)->S(1)");
  EXPECT_EQ(Row(Style::kGroupedGemm), "S(0) | S(0) | - | -");
  EXPECT_EQ(Row(Style::kEpRouter), "R | R | R->R | R->R");
  EXPECT_EQ(Row(Style::kMoeTpExperts), "- | - | R->R | P->R");
}

}  // namespace
}  // namespace shardplan

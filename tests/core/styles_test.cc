#include "core/planning/styles.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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
  for (size_t s = 0; s < kStyleCount; ++s) {
    const Style style = static_cast<Style>(s);
    EXPECT_EQ(ParseStyle(StyleName(style)), style) << StyleName(style);
  }
  EXPECT_EQ(kStyleCount, 26u);
  EXPECT_EQ(ParseStyle("Colwise"), std::nullopt);
  EXPECT_EQ(ParseStyle("local_colwise"), Style::kLocalColwise);
  // The parser's and the builder's refusal lists every name.
  const std::string message = UnknownStyleMessage("colwsie");
  EXPECT_EQ(message.rfind("unknown template style 'colwsie' (expected one of: colwise, ", 0), 0u) << message;
  for (size_t s = 0; s < kStyleCount; ++s) {
    EXPECT_NE(message.find(absl::StrCat(" ", StyleName(static_cast<Style>(s)), s + 1 == kStyleCount ? ")" : ",")),
              std::string::npos)
        << StyleName(static_cast<Style>(s));
  }
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

// transformers 5.x's other names, as their classes place (5.15).
TEST(StylesTest, TheOtherTransformers5Names) {
  EXPECT_EQ(Row(Style::kPackedRowwise), "S(-1) | R | S(-1)->S(-1) | P->R");
  EXPECT_EQ(Row(Style::kAllReduce), "R | R | - | P->R");
  for (Style s : {Style::kMoeIdentityExpert, Style::kMlaKvAProj, Style::kMegamoeRouter, Style::kMegamoeExperts}) {
    EXPECT_EQ(Row(s), "R | R | - | -") << StyleName(s);
  }
}

// transformers 4.x's names that 5.x dropped (4.57): those renamed without
// change place as their successor, Embedding variant included; the others
// as their classes do.
TEST(StylesTest, TheTransformers4Names) {
  for (bool embedding : {false, true}) {
    EXPECT_EQ(Row(Style::kColwiseRep, embedding), Row(Style::kColwiseGatherOutput, embedding));
    EXPECT_EQ(Row(Style::kRowwiseRep, embedding), Row(Style::kRowwiseSplitInput, embedding));
    EXPECT_EQ(Row(Style::kLocalColwise, embedding), Row(Style::kColwise, embedding));
  }
  EXPECT_EQ(Row(Style::kColwiseRep), "S(-2) | S(-1) | R->R | S(-1)->R");
  EXPECT_EQ(Row(Style::kRowwiseRep), "S(-1) | R | R->S(-1) | P->R");
  EXPECT_EQ(Row(Style::kLocalColwise), "S(-2) | S(-1) | R->R | S(-1)->S(-1)");
  EXPECT_EQ(Row(Style::kLocalRowwise), "S(-1) | R | S(-1)->S(-1) | P->P");
  EXPECT_EQ(Row(Style::kLocalRowwise, true), "S(-1) | R | S(-1)->S(-1) | P->P");
  EXPECT_EQ(Row(Style::kLocalPackedRowwise), "S(-1) | S(-1) | S(-1)->S(-1) | P->P");
  EXPECT_EQ(Row(Style::kLocal), "R | R | - | -");
  EXPECT_EQ(Row(Style::kGather), "R | R | - | P->R");
}

TEST(StylesTest, OnlyThePackedStylesHoldFusedHalves) {
  for (size_t s = 0; s < kStyleCount; ++s) {
    const Style style = static_cast<Style>(s);
    const bool packed =
        style == Style::kPackedColwise || style == Style::kPackedRowwise || style == Style::kLocalPackedRowwise;
    EXPECT_EQ(PlacementsOf(style, false).packed, packed) << StyleName(style);
  }
}

// Every 4.x name that transformers 5 dropped has a LegacyOf, and only those;
// a same-plan successor is a 5.x name.
TEST(StylesTest, LegacyNamesAndTheirSuccessors) {
  const std::vector<Style> legacy = {Style::kColwiseRep,   Style::kRowwiseRep,         Style::kLocalColwise,
                                     Style::kLocalRowwise, Style::kLocalPackedRowwise, Style::kLocal,
                                     Style::kGather};
  for (size_t s = 0; s < kStyleCount; ++s) {
    const Style style = static_cast<Style>(s);
    const std::optional<LegacyStyle> l = LegacyOf(style);
    EXPECT_EQ(l.has_value(), std::find(legacy.begin(), legacy.end(), style) != legacy.end()) << StyleName(style);
    if (!l) continue;
    if (l->successor) EXPECT_FALSE(LegacyOf(*l->successor).has_value()) << StyleName(style);
    EXPECT_EQ(l->same_plan, l->difference.empty() && l->successor.has_value()) << StyleName(style);
  }
  EXPECT_EQ(LegacyOf(Style::kColwiseRep)->successor, Style::kColwiseGatherOutput);
  EXPECT_EQ(LegacyOf(Style::kLocalPackedRowwise)->successor, Style::kPackedRowwise);
  EXPECT_FALSE(LegacyOf(Style::kLocal)->successor.has_value());
}

}  // namespace
}  // namespace shardplan

#include "core/text/glob.h"
#include "core/text/utf8.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/fnmatch_cases.h"

namespace shardplan {
namespace {

bool Match(std::string_view pattern, std::string_view text) { return Glob(pattern).Matches(text); }

TEST(GlobTest, StarCrossesDots) {
  EXPECT_TRUE(Match("layers.*.mlp", "layers.0.mlp"));
  EXPECT_TRUE(Match("layers.*.mlp", "layers.0.block.mlp"));
  EXPECT_TRUE(Match("*", ""));
  EXPECT_TRUE(Match("*", "a.b.c"));
  EXPECT_FALSE(Match("layers.*.mlp", "layers.0.mlp.gate_proj"));
}

TEST(GlobTest, QuestionMatchesExactlyOneCharacterIncludingDot) {
  EXPECT_TRUE(Match("nor?", "norm"));
  EXPECT_TRUE(Match("a?b", "a.b"));
  EXPECT_FALSE(Match("nor?", "nor"));
  EXPECT_FALSE(Match("nor?", "norms"));
  EXPECT_TRUE(Match("?", "\xc3\xa9"));  // one code point, two bytes
}

// The inline checks of ASCII text (its last eight characters against the
// literals after the last star, then its last character) never reject a
// match, whatever the text's length or the tokens before and within them.
TEST(GlobTest, TailChecksAgreeWithFnmatch) {
  EXPECT_TRUE(Match("layers.*.experts.[0-9]", "layers.3.experts.5"));
  EXPECT_FALSE(Match("layers.*.experts.[0-9]", "layers.3.experts.15"));
  EXPECT_FALSE(Match("layers.*.experts.[0-9]", "layers.3.experts.5.up_proj"));
  EXPECT_TRUE(Match("layers.*.experts.[0-9][0-9]", "layers.30.experts.15"));
  EXPECT_TRUE(Match("layers.*.mlp.gate", "layers.10.mlp.gate"));
  EXPECT_FALSE(Match("layers.*.mlp.gate", "layers.10.mlp.gates"));
  EXPECT_TRUE(Match("*.weight", "w.weight"));  // eight characters
  EXPECT_TRUE(Match("*.weight", ".weight"));   // seven: not loaded as a word
  EXPECT_FALSE(Match("*.weight", "x.weigh"));
  EXPECT_TRUE(Match("*.weight", "layers.0.attn.weight"));
  EXPECT_FALSE(Match("*.attention.weight", "x.attentiox.weight"));  // differs before the last eight
  EXPECT_TRUE(Match("*proj", "proj"));
  EXPECT_FALSE(Match("*proj", "o_prok"));
  EXPECT_TRUE(Match("a*b?d.e", "axxbcd.e"));  // '?' among the last eight
  EXPECT_FALSE(Match("a*b?d.e", "axxbcd.f"));
  EXPECT_TRUE(Match("*.[!a]bcdefgh", "q.zbcdefgh"));  // a set among them
  EXPECT_FALSE(Match("*.[!a]bcdefgh", "q.abcdefgh"));
  EXPECT_TRUE(Match("l*", "layers.19.y"));  // nothing after the star
  EXPECT_FALSE(Match("*x*", "layers.19.y"));
  EXPECT_TRUE(Match("layers.1.mlp", "layers.1.mlp"));  // no star
  EXPECT_FALSE(Match("layers.1.mlp", "layers.1.mlq"));
}

TEST(GlobTest, WholeStringAndCaseSensitive) {
  EXPECT_FALSE(Match("mlp", "layers.0.mlp"));
  EXPECT_FALSE(Match("MLP", "mlp"));
  EXPECT_TRUE(Match("", ""));
  EXPECT_FALSE(Match("", "a"));
}

TEST(GlobTest, SetsRangesAndNegation) {
  EXPECT_TRUE(Match("layers.[01].mlp", "layers.1.mlp"));
  EXPECT_FALSE(Match("layers.[01].mlp", "layers.2.mlp"));
  EXPECT_TRUE(Match("layers.[0-3].mlp", "layers.2.mlp"));
  EXPECT_TRUE(Match("layers.[!0].mlp", "layers.5.mlp"));
  EXPECT_FALSE(Match("layers.[!0].mlp", "layers.0.mlp"));
  EXPECT_TRUE(Match("[.]", "."));
  EXPECT_TRUE(Match("a[.]b", "a.b"));
}

TEST(GlobTest, BracketEdgeCasesFollowFnmatch) {
  EXPECT_TRUE(Match("[]]", "]"));        // leading ']' is literal
  EXPECT_TRUE(Match("[!]]", "a"));
  EXPECT_FALSE(Match("[!]]", "]"));
  EXPECT_TRUE(Match("a[", "a["));        // unclosed '[' is literal
  EXPECT_TRUE(Match("[a-]", "-"));       // trailing '-' is literal
  EXPECT_TRUE(Match("[-a]", "-"));       // leading '-' is literal
  EXPECT_FALSE(Match("[z-a]", "z"));     // empty range never matches
  EXPECT_FALSE(Match("[z-a]", "a"));
  EXPECT_TRUE(Match("[!z-a]", "q"));     // negated empty range matches anything
  EXPECT_TRUE(Match("[a-c-e]", "-"));    // after a range, '-' is literal
  EXPECT_TRUE(Match("[a-c-e]", "e"));
  EXPECT_FALSE(Match("[a-c-e]", "d"));
  EXPECT_TRUE(Match("[\\]", "\\"));      // backslash is literal
}

TEST(GlobTest, LiteralPatternsAreRecognized) {
  EXPECT_TRUE(Glob("layers.0.mlp").is_literal());
  EXPECT_TRUE(Glob("a[").is_literal());
  EXPECT_FALSE(Glob("layers.*").is_literal());
  EXPECT_FALSE(Glob("nor?").is_literal());
  EXPECT_FALSE(Glob("[ab]").is_literal());
}

TEST(GlobTest, LiteralPrefixStopsAtTheFirstWildcard) {
  EXPECT_EQ(Glob("layers.3.mlp.experts.*").literal_prefix(), "layers.3.mlp.experts.");
  EXPECT_EQ(Glob("layers.[0-9].mlp").literal_prefix(), "layers.");
  EXPECT_EQ(Glob("a[.b").literal_prefix(), "a[.b");  // unclosed '[' is literal
  EXPECT_EQ(Glob("caf\xc3\xa9.?").literal_prefix(), "caf\xc3\xa9.");
  EXPECT_EQ(Glob("*.mlp").literal_prefix(), "");
}

TEST(GlobTest, LiteralTailStartsAfterTheLastWildcard) {
  EXPECT_EQ(Glob("*.5.proj").literal_tail(), ".5.proj");
  EXPECT_EQ(Glob("layers.*.experts.17").literal_tail(), ".experts.17");
  EXPECT_EQ(Glob("layers.?.mlp").literal_tail(), ".mlp");
  EXPECT_EQ(Glob("layers.[0-9]x").literal_tail(), "x");
  EXPECT_EQ(Glob("*.x[").literal_tail(), ".x[");  // unclosed '[' is literal
  EXPECT_EQ(Glob("*caf\xc3\xa9").literal_tail(), "caf\xc3\xa9");
  EXPECT_EQ(Glob("layers.*").literal_tail(), "");
  EXPECT_EQ(Glob("*.experts.[0-9]").literal_tail(), "");
  EXPECT_EQ(Glob("layers.0").literal_tail(), "layers.0");  // no wildcard
}

TEST(GlobTest, BacktrackingStarsDoNotBlowUp) {
  std::string text(2000, 'a');
  EXPECT_FALSE(Match("*a*a*a*a*a*b", text));
  EXPECT_TRUE(Match("*a*a*a*a*a*", text));
}

// Random patterns and texts rich in glob syntax, with Python's
// fnmatch.fnmatchcase verdicts (tools/gen_fnmatch_cases.py).
TEST(GlobTest, AgreesWithPythonFnmatchOnRandomCases) {
  const std::vector<FnmatchCase> cases = ReadFnmatchCases();
  ASSERT_EQ(cases.size(), 10000u) << "missing test data";
  for (const FnmatchCase& c : cases) {
    EXPECT_EQ(Match(c.pattern, c.text), c.match) << "pattern '" << c.pattern << "' text '" << c.text << "'";
  }
}

}  // namespace
}  // namespace shardplan

#include "core/planning/templates.h"

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(TemplatePatternTest, StarIsExactlyOneSegment) {
  const TemplatePattern p("", "layers.*.self_attn.q_proj");
  EXPECT_TRUE(p.Matches("layers.0.self_attn.q_proj"));
  EXPECT_TRUE(p.Matches("layers.17.self_attn.q_proj"));
  EXPECT_FALSE(p.Matches("layers.0.block.self_attn.q_proj"));  // fnmatch's * would match
  EXPECT_FALSE(p.Matches("layers..self_attn.q_proj"));           // one or more characters
  EXPECT_FALSE(p.Matches("layers.0.self_attn.q_proj.weight"));   // whole FQN only
  EXPECT_FALSE(p.Matches("layers.0.self_attn"));
}

TEST(TemplatePatternTest, PrefixIsJoinedWithADot) {
  const TemplatePattern p("model", "layers.*.mlp");
  EXPECT_TRUE(p.Matches("model.layers.3.mlp"));
  EXPECT_FALSE(p.Matches("layers.3.mlp"));
  EXPECT_FALSE(p.Matches("modellayers.3.mlp"));
}

TEST(TemplatePatternTest, EverythingElseIsLiteral) {
  EXPECT_TRUE(TemplatePattern("", "lm_head").Matches("lm_head"));
  EXPECT_FALSE(TemplatePattern("", "lm_hea?").Matches("lm_head"));
  EXPECT_TRUE(TemplatePattern("", "lm_hea?").Matches("lm_hea?"));
  EXPECT_FALSE(TemplatePattern("", "experts.[0-9]").Matches("experts.1"));
  EXPECT_FALSE(TemplatePattern("", "a*").Matches("ab"));  // '*' inside a segment is literal
  EXPECT_TRUE(TemplatePattern("", "a*").Matches("a*"));
  EXPECT_TRUE(TemplatePattern("", "*").Matches("embed"));
  EXPECT_FALSE(TemplatePattern("", "*").Matches(""));
  EXPECT_TRUE(TemplatePattern("", "*.*").Matches("a.b"));
  EXPECT_FALSE(TemplatePattern("", "*.*").Matches("a.b.c"));
}

TEST(TemplatePatternTest, ParameterPathsMatchAsTheirJoinedName) {
  for (const auto& [prefix, pattern] : std::vector<std::pair<std::string, std::string>>{
           {"", "layers.*.mlp.weight"}, {"model", "*.weight"}, {"", "weight"}, {"", "*"}, {"a", "b.*"}}) {
    const TemplatePattern p(prefix, pattern);
    for (const auto& [module, name] : std::vector<std::pair<std::string, std::string>>{
             {"layers.0.mlp", "weight"}, {"layers.0.mlp", "bias"}, {"", "weight"}, {"model.x", "weight"},
             {"model", "weight"}, {"a.b", "c"}, {"a", "b"}, {"layers..mlp", "weight"}}) {
      const std::string joined = module.empty() ? name : module + "." + name;
      EXPECT_EQ(p.MatchesParameter(module, name), p.Matches(joined)) << prefix << " | " << pattern << " | " << joined;
    }
  }
}

// ---------------------------------------------------------------------------
// TemplateIndex: the same matches as each TemplatePattern on its own.

// The rules among `patterns` whose pattern matches, by the definition.
std::vector<uint32_t> Plain(const std::vector<TemplatePattern>& patterns, std::string_view module_fqn,
                            const std::string* name) {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < patterns.size(); ++r) {
    if (name == nullptr ? patterns[r].Matches(module_fqn) : patterns[r].MatchesParameter(module_fqn, *name)) {
      out.push_back(r);
    }
  }
  return out;
}

TEST(TemplateIndexTest, SmallCases) {
  TemplateIndex index;
  index.Add("", "layers.*.mlp");        // 0
  index.Add("", "layers.3.mlp");        // 1
  index.Add("model", "layers.*.mlp");   // 2
  index.Add("", "*");                   // 3
  index.Add("", "layers.3.mlp");        // 4: the same pattern again (another template)
  index.Add("layers", "3.mlp.weight");  // 5
  index.Add("", "a*");                  // 6: '*' next to other characters is literal
  EXPECT_EQ(index.size(), 7u);
  EXPECT_EQ(index.Matching("layers.3.mlp"), (std::vector<uint32_t>{0, 1, 4}));
  EXPECT_EQ(index.Matching("layers.4.mlp"), (std::vector<uint32_t>{0}));
  EXPECT_EQ(index.Matching("model.layers.3.mlp"), (std::vector<uint32_t>{2}));
  EXPECT_EQ(index.Matching("lm_head"), (std::vector<uint32_t>{3}));
  EXPECT_EQ(index.Matching("a*"), (std::vector<uint32_t>{3, 6}));
  EXPECT_EQ(index.Matching("ab"), (std::vector<uint32_t>{3}));
  EXPECT_EQ(index.Matching(""), (std::vector<uint32_t>{}));
  EXPECT_EQ(index.Matching("layers..mlp"), (std::vector<uint32_t>{}));
  EXPECT_EQ(index.MatchingParameter("layers.3.mlp", "weight"), (std::vector<uint32_t>{5}));
  EXPECT_EQ(index.MatchingParameter("", "weight"), (std::vector<uint32_t>{3}));
  EXPECT_EQ(index.MatchingParameter("layers.3", "mlp"), (std::vector<uint32_t>{0, 1, 4}));

  // A walk that reaches nothing matches nothing further down.
  TemplateIndex::State state = index.Start(), next;
  for (std::string_view segment : {"embed", "x"}) {
    index.Step(state, segment, next);
    std::swap(state, next);
  }
  EXPECT_TRUE(state.empty());
  std::vector<uint32_t> rules;
  index.Rules(state, rules);
  EXPECT_TRUE(rules.empty());
}

TEST(TemplateIndexTest, MatchesAsEachPatternDoesOnRandomPatternsAndPaths) {
  // Few segment spellings, so that literal, '*' and mixed patterns overlap
  // and share leading segments; "" makes empty segments, "a*" and "*b" are
  // literal.
  const std::vector<std::string> words = {"a", "b", "ab", "*", "a*", "*b", "", "0", "17"};
  std::mt19937 rng(40);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  auto dotted = [&](size_t min_segments, size_t max_segments, bool stars) {
    std::vector<std::string> segments(min_segments + pick(max_segments - min_segments + 1));
    for (std::string& s : segments) {
      do {
        s = words[pick(words.size())];
      } while (!stars && s == "*");
    }
    return absl::StrJoin(segments, ".");
  };
  for (int trial = 0; trial < 200; ++trial) {
    SCOPED_TRACE(trial);
    TemplateIndex index;
    std::vector<TemplatePattern> patterns;
    const size_t rules = 1 + pick(trial < 100 ? 8 : 60);
    for (size_t r = 0; r < rules; ++r) {
      const std::string prefix = pick(3) == 0 ? dotted(1, 2, /*stars=*/false) : "";
      const size_t kind = pick(3);  // literal, all stars, mixed
      std::string pattern = dotted(1, 4, /*stars=*/kind != 0);
      if (kind == 1) {
        std::vector<std::string> stars(1 + pick(4), "*");
        pattern = absl::StrJoin(stars, ".");
      }
      index.Add(prefix, pattern);
      patterns.emplace_back(prefix, pattern);
    }
    ASSERT_EQ(index.size(), patterns.size());
    for (int path = 0; path < 100; ++path) {
      const std::string fqn = pick(10) == 0 ? "" : dotted(1, 6, /*stars=*/true);
      ASSERT_EQ(index.Matching(fqn), Plain(patterns, fqn, nullptr)) << "'" << fqn << "'";
      const std::string name = words[pick(words.size())];
      ASSERT_EQ(index.MatchingParameter(fqn, name), Plain(patterns, fqn, &name)) << "'" << fqn << "' '" << name << "'";
    }
  }
}

}  // namespace
}  // namespace shardplan

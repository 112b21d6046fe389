#include "core/planning/templates.h"

#include <string>
#include <utility>
#include <vector>

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

}  // namespace
}  // namespace shardplan

// Did you mean, over the module tree: the nearest module path, parameter
// name and glob pattern.
#include "core/model/nearest.h"

#include <memory>
#include <optional>
#include <string>

#include "core/model/parse.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// root -> {embed, layers: {0, 1} -> block -> {self_attn, mlp: {experts: {0, 1}}}}.
constexpr char kModel[] = R"J({
  "schema": "shardplan.v1", "mesh": {"tp": 2},
  "parameters": {"w": {"shape": [4, 4]}},
  "root": "root",
  "modules": {
    "root": {"children": {"embed": "lin", "layers": "layers"}},
    "layers": {"children": {"0": "block", "1": "block"}},
    "block": {"children": {"self_attn": "lin", "mlp": "mlp"}},
    "mlp": {"children": {"experts": "experts", "up_proj": "lin"}},
    "experts": {"children": {"0": "lin", "1": "lin"}},
    "lin": {"params": {"weight": "w"}}
  }
})J";

class NearestTest : public ::testing::Test {
 protected:
  NearestTest() : doc_(std::move(ParseDocument(kModel, Limits{}).document)), tree_(*doc_) {}
  std::unique_ptr<Document> doc_;
  ModuleTree tree_;
};

TEST_F(NearestTest, ModulesAndParametersSegmentBySegment) {
  EXPECT_EQ(NearestModule(tree_, 0, "layers.0.mlpp"), "layers.0.mlp");
  EXPECT_EQ(NearestModule(tree_, 0, "layers.0.mlp"), std::nullopt);  // it exists
  EXPECT_EQ(NearestModule(tree_, 0, "layers.0.attention"), std::nullopt);  // nothing near
  EXPECT_EQ(NearestParameter(tree_, 0, "embed.wieght"), "embed.weight");
}

TEST_F(NearestTest, PatternsKeepTheirWildcardsAndFixTheirNames) {
  EXPECT_EQ(NearestPattern(tree_, "layers.*.mlp.expert.*", false), "layers.*.mlp.experts.*");
  EXPECT_EQ(NearestPattern(tree_, "layer.[01].self_atn", false), "layers.[01].self_attn");
  // Matching already, or a wildcard segment that matches nothing: no help.
  EXPECT_EQ(NearestPattern(tree_, "layers.*.mlp", false), std::nullopt);
  EXPECT_EQ(NearestPattern(tree_, "layers.*.mlp.gate_*", false), std::nullopt);
  // Nothing near a segment.
  EXPECT_EQ(NearestPattern(tree_, "layers.*.attention", false), std::nullopt);
}

TEST_F(NearestTest, PatternsForTemplatesMayEndInAParameterSlot) {
  EXPECT_EQ(NearestPattern(tree_, "layers.*.mlp.up_proj.wieght", true), "layers.*.mlp.up_proj.weight");
  EXPECT_EQ(NearestPattern(tree_, "layers.*.mlp.up_prj", true), "layers.*.mlp.up_proj");
  // Modules only: a slot is no module.
  EXPECT_EQ(NearestPattern(tree_, "layers.*.mlp.up_proj.wieght", false), std::nullopt);
}

}  // namespace
}  // namespace shardplan

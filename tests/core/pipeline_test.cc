#include "core/planning/pipeline.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/parse.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A model `m` (forward input_ids, **kwargs) with an Embedding `emb`, a
// ModuleList `layers` of two blocks (forward x, mask; the second also
// **kwargs when `kwargs`) and a `norm` (forward h), and `pipeline`.
std::string Doc(std::string_view pipeline, bool kwargs = false) {
  return absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 1}, "parameters": {}, "root": "m",
    "modules": {
      "m": {"forward": ["input_ids", "**kwargs"], "children": {"emb": "emb", "layers": "layers", "norm": "norm"}},
      "emb": {"type": "Embedding", "forward": ["input"]},
      "layers": {"type": "ModuleList", "forward": ["*input"], "children": {"0": "b0", "1": "b1"}},
      "b0": {"forward": ["x", "mask"]},
      "b1": {"forward": ["x", "mask")J",
                      kwargs ? R"J(, "**kwargs")J" : "", R"J(]},
      "norm": {"forward": ["h"]}},
    "pipeline": )J",
                      pipeline, "}");
}

// `code pointer (help)` per finding.
std::vector<std::string> Findings(std::string_view pipeline, bool kwargs = false) {
  ParseResult parsed = ParseDocument(Doc(pipeline, kwargs), {});
  EXPECT_FALSE(parsed.error) << parsed.error->message;
  if (parsed.error) return {};
  const ModuleTree tree(*parsed.document);
  DiagnosticSink sink(Mode::kPlan);
  CheckPipeline(tree, sink);
  std::vector<std::string> out;
  for (const Diagnostic& d : sink.Take()) {
    out.push_back(absl::StrCat(d.code, " ", d.pointer.value_or("-"), d.fix_it ? " (" + d.fix_it->help + ")" : ""));
  }
  return out;
}

TEST(PipelineTest, InputsComeFromTheModuleTheModelOrAnEarlierStage) {
  // input_ids: the model's; x and mask: each block's (layers is a
  // container); y: an earlier stage's output; h: the norm's.
  EXPECT_EQ(Findings(R"J({"modules": {"emb": [["input_ids"], ["y"]], "layers": [["x", "mask", "y"], ["x"]],
                                      "norm": [["h"], ["h"]]}})J"),
            std::vector<std::string>{});
  // An output counts only for later stages.
  EXPECT_EQ(Findings(R"J({"modules": {"emb": [["y"], ["y"]]}})J"),
            std::vector<std::string>{"pipeline-unknown-input /pipeline/modules/emb/0/0"});
}

TEST(PipelineTest, AContainerTakesWhatEveryChildTakes) {
  const std::string plan = R"J({"modules": {"layers": [["z", "mask"], []]}})J";
  const std::vector<std::string> refused = {"pipeline-unknown-input /pipeline/modules/layers/0/0 (did you mean 'x'?)"};
  EXPECT_EQ(Findings(plan), refused);
  // Only b1 takes **kwargs: b0 still refuses z.
  EXPECT_EQ(Findings(plan, /*kwargs=*/true), refused);
  // The model's **kwargs feeds nothing by name.
  EXPECT_EQ(Findings(R"J({"modules": {"norm": [["anything"], []]}})J"),
            std::vector<std::string>{"pipeline-unknown-input /pipeline/modules/norm/0/0"});
}

TEST(PipelineTest, UnknownModulesAndPrefixesSuggestTheNearest) {
  EXPECT_EQ(Findings(R"J({"modules": {"layer": [["x"], []], "norm": [["hh"], []]}})J"),
            (std::vector<std::string>{"pipeline-unknown-module /pipeline/modules/layer (did you mean 'layers'?)",
                                      "pipeline-unknown-input /pipeline/modules/norm/0/0 (did you mean 'h'?)"}));
  // A dotted name resolves under the prefix.
  EXPECT_EQ(Findings(R"J({"prefix": "layers", "modules": {"0": [["x"], []], "2": [["x"], []]}})J"),
            std::vector<std::string>{"pipeline-unknown-module /pipeline/modules/2 (did you mean '0'?)"});
  // An unknown prefix is the one finding: nothing under it can be checked.
  EXPECT_EQ(Findings(R"J({"prefix": "layerz", "modules": {"zz": [["q"], []]}})J"),
            std::vector<std::string>{"pipeline-unknown-module /pipeline/prefix (did you mean 'layers'?)"});
}

TEST(PipelineTest, AMalformedPlanIsAnInvalidDocument) {
  for (std::string_view bad : {R"J({"modules": {"emb": [["x"]]}})J", R"J({"modules": {"emb": [["x"], "y"]}})J",
                               R"J({"modules": {"": [[], []]}})J", R"J({"prefix": 1, "modules": {}})J",
                               R"J({"modules": {"emb": [[1], []]}})J", R"J({"stages": {}})J"}) {
    EXPECT_TRUE(ParseDocument(Doc(bad), {}).error) << bad;
  }
}

}  // namespace
}  // namespace shardplan

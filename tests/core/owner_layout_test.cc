#include "core/ownership/owner_layout.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/parse.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A document whose root has `children` (JSON members), with the `mesh` and
// `parameters` of `head`, `modules` after the root's, and `providers` as
// model providers; null after a failed expectation.
std::unique_ptr<Document> ProvidersDocument(std::string_view head, std::string_view children,
                                            std::string_view modules, std::string_view providers) {
  const std::string text = absl::StrCat(R"J({"schema": "shardplan.v1", )J", head, R"J(, "root": "root",)J",
                                        R"J( "modules": {"root": {"children": {)J", children, "}}", modules, "},",
                                        R"J( "providers": {"sharding": {)J", providers, "}}}");
  ParseResult parsed = ParseDocument(text, Limits{});
  EXPECT_FALSE(parsed.error.has_value()) << parsed.error->message;
  return std::move(parsed.document);
}

// "code|fqn|parameter|pointer|message" of each diagnostic.
std::vector<std::string> Findings(DiagnosticSink& sink) {
  std::vector<std::string> out;
  for (const Diagnostic& d : sink.Take()) {
    out.push_back(absl::StrCat(d.code, "|", d.fqn.value_or("-"), "|", d.parameter.value_or("-"), "|",
                               d.pointer.value_or("-"), "|", d.message));
  }
  return out;
}

constexpr char kMesh[] = R"J("mesh": {"dp": 2, "tp": 2}, "parameters": {"w": {"shape": [4, 4]}})J";

TEST(OwnerLayoutTest, ACleanLayoutReportsNothing) {
  const std::unique_ptr<Document> doc = ProvidersDocument(
      kMesh, R"J("c": "m")J", R"J(, "m": {"forward": ["x"], "params": {"w": "w"}})J",
      R"J("c": {"params": {"w": {"tp": "S(0)"}}, "in_src": {"x": {"dp": "S(0)"}}, "in_dst": {"x": {}},)J"
      R"J( "out_src": {"y": {"tp": "P"}}, "out_names": ["y"]})J");
  ASSERT_NE(doc, nullptr);
  const ModuleTree tree(*doc);
  DiagnosticSink sink;
  CheckPorts(tree, 1, doc->model_providers[0].layout, sink);
  CheckPlacements(tree, 1, doc->model_providers[0].layout, sink);
  EXPECT_TRUE(Findings(sink).empty());
}

// Every port finding, in the contract's order, each pointing at its field.
TEST(OwnerLayoutTest, PortsAreCheckedInOrder) {
  const std::unique_ptr<Document> doc = ProvidersDocument(
      kMesh, R"J("c": "m")J", R"J(, "m": {"forward": ["x"], "params": {"w": "w"}})J",
      R"J("c": {"in_src": {"z": {}, "b/c": {}}, "in_dst": {"x": {}}, "out_names": ["o", "p", "o", "o"],)J"
      R"J( "inner_wrapper": "w"})J");
  ASSERT_NE(doc, nullptr);
  const ModuleTree tree(*doc);
  DiagnosticSink sink;
  CheckPorts(tree, 1, doc->model_providers[0].layout, sink);
  EXPECT_EQ(Findings(sink),
            (std::vector<std::string>{
                "legacy-injection|c|-|/providers/sharding/c/inner_wrapper|module-owned layouts cannot install legacy "
                "compute injection",
                "ports-missing|c|-|/providers/sharding/c|module-owned providers must declare params, in_src and in_dst "
                "explicitly",
                "ports-mismatch|c|-|/providers/sharding/c/in_dst|module-owned in_src and in_dst must declare the same "
                "input names",
                "unknown-forward-input|c|-|/providers/sharding/c/in_src/b~1c|layout declares unknown forward inputs "
                "['b/c', 'z']",
                "duplicate-output-name|c|-|/providers/sharding/c/out_names/2|output names must be unique",
            }));
}

// An unknown axis is reported once, at its first placement, whatever the
// map; a Partial parameter once per parameter.
TEST(OwnerLayoutTest, UnknownAxesOnceAndPartialParameters) {
  const std::unique_ptr<Document> doc = ProvidersDocument(
      R"J("mesh": {"tp": 2}, "parameters": {"w": {}, "b": {}})J", R"J("c": "m")J",
      R"J(, "m": {"forward": ["x"], "params": {"w": "w", "b": "b"}, "parallel": {"binding_kind": "tp",)J"
      R"J( "axes": ["xx", "tp", "xx", "yy"]}})J",
      R"J("c": {"params": {"w": {"xx": "R", "tp": "P"}, "b": {"xx": "S(0)", "tp": "P(max)"}},)J"
      R"J( "in_src": {"x": {"yy": "R"}}, "in_dst": {"x": {"xx": "R"}}})J");
  ASSERT_NE(doc, nullptr);
  const ModuleTree tree(*doc);
  DiagnosticSink sink;
  CheckPlacements(tree, 1, doc->model_providers[0].layout, sink);
  CheckParallelAxes(tree, 1, *doc->modules[tree.module(1)].parallel, sink);
  EXPECT_EQ(Findings(sink),
            (std::vector<std::string>{
                "unknown-axis|c|c.w|/providers/sharding/c/params/w/xx|module layouts cannot declare storage/unknown "
                "axis 'xx'",
                "unknown-axis|c|-|/providers/sharding/c/in_src/x/yy|module layouts cannot declare storage/unknown axis "
                "'yy'",
                "partial-parameter|c|c.w|/providers/sharding/c/params/w|parameter source layouts cannot be Partial",
                "partial-parameter|c|c.b|/providers/sharding/c/params/b|parameter source layouts cannot be Partial",
                "parallel-unknown-axis|c|-|/modules/m/parallel/axes/0|parallel module declares unknown communication "
                "axis 'xx'",
                "parallel-unknown-axis|c|-|/modules/m/parallel/axes/3|parallel module declares unknown communication "
                "axis 'yy'",
            }));
}

}  // namespace
}  // namespace shardplan

#include "core/ownership/layout_checks.h"

#include <memory>
#include <random>
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

// CleanLayouts answers, without a diagnostic, whether CheckPlacements and
// CheckParallelAxes would report anything. Over many providers whose maps
// mix mesh and unknown axes, Partial and other placements, with more
// distinct maps than it remembers and repeats in every order, it must agree
// with the full checks on each one.
TEST(CleanLayoutsTest, AgreesWithTheFullChecks) {
  const std::vector<std::string> placements = {
      R"J({"dp": "R", "tp": "S(0)"})J", R"J({"dp": "S(0)", "tp": "P"})J", R"J({"tp": "S(1)"})J", R"J({"xx": "R"})J",
      R"J({"dp": "R", "xx": "P"})J",    R"J({})J",                        R"J({"tp": "P(max)"})J"};
  const std::vector<std::string> axes = {R"J(["dp", "tp"])J", R"J(["tp"])J", R"J(["dp", "yy"])J", R"J([])J"};
  std::mt19937 random(3);
  auto pick = [&](const std::vector<std::string>& from) { return from[random() % from.size()]; };
  constexpr int kModules = 400;
  std::string modules, providers;
  for (int i = 0; i < kModules; ++i) {
    const std::string I = std::to_string(i);
    absl::StrAppend(&modules, ", \"m", I, R"J(": {"forward": ["x"], "params": {"w": "w"}, "parallel": )J",
                    R"J({"binding_kind": "tp", "axes": )J", pick(axes), "}}");
    std::string layout = absl::StrCat(R"J({"params": {"w": )J", pick(placements), R"J(}, "in_src": {"x": )J",
                                      pick(placements), R"J(}, "in_dst": {"x": )J", pick(placements), "}");
    if (random() % 2) absl::StrAppend(&layout, R"J(, "out_src": {"y": )J", pick(placements), "}");
    if (random() % 2) absl::StrAppend(&layout, R"J(, "out_dst": {"y": )J", pick(placements), "}");
    absl::StrAppend(&providers, i ? ", " : "", "\"c", I, "\": ", layout, "}");
  }
  std::string children;
  for (int i = 0; i < kModules; ++i) absl::StrAppend(&children, i ? ", " : "", "\"c", i, "\": \"m", i, "\"");
  const std::unique_ptr<Document> parsed = ProvidersDocument(
      R"J("mesh": {"dp": 2, "tp": 2}, "parameters": {"w": {"shape": [4, 4]}})J", children, modules, providers);
  ASSERT_NE(parsed, nullptr);
  const Document& doc = *parsed;
  const ModuleTree tree(doc);
  ASSERT_EQ(doc.model_providers.size(), size_t{kModules});

  CleanLayouts clean(doc);
  int clean_layouts = 0, clean_axes = 0;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kModules; ++i) {
      const FqnLayout& provider = doc.model_providers[random() % kModules];
      const PathId path = tree.Resolve(doc.Name(provider.fqn));
      ASSERT_NE(path, kNoPath);
      DiagnosticSink placements_found, axes_found;
      CheckPlacements(tree, path, provider.layout, placements_found);
      EXPECT_EQ(clean.Placements(provider.layout), placements_found.Take().empty()) << doc.Name(provider.fqn);
      clean_layouts += clean.Placements(provider.layout);
      const ParallelSpec& parallel = *doc.modules[tree.module(path)].parallel;
      CheckParallelAxes(tree, path, parallel, axes_found);
      EXPECT_EQ(clean.ParallelAxes(parallel), axes_found.Take().empty()) << doc.Name(provider.fqn);
      clean_axes += clean.ParallelAxes(parallel);
    }
  }
  // Both answers occur often.
  EXPECT_GT(clean_layouts, 5);
  EXPECT_LT(clean_layouts, 2 * kModules - 5);
  EXPECT_GT(clean_axes, 5);
  EXPECT_LT(clean_axes, 2 * kModules - 5);
}

// CleanLayouts::Ports answers whether CheckPorts would report anything.
// Over modules whose forward names and input ports vary in runs (so that
// its remembered clean ports are both reused and replaced), and whose
// out_names, legacy fields and params vary from one to the next, checked in
// order and then at random, it must agree with CheckPorts on each one.
TEST(CleanLayoutsTest, PortsAgreesWithCheckPorts) {
  const std::vector<std::string> forwards = {R"J(["x"])J", R"J(["x", "y"])J", R"J(["y"])J", R"J(["**kw"])J", R"J([])J"};
  const std::vector<std::string> inputs = {R"J({"x": {"tp": "R"}})J", R"J({"x": {"tp": "S(0)"}})J",
                                           R"J({"y": {"tp": "R"}})J", R"J({"x": {}, "y": {}})J"};
  const std::vector<std::string> extras = {"",
                                           "",
                                           "",
                                           R"J(, "out_names": ["o"])J",
                                           R"J(, "out_names": ["o", "p"])J",
                                           R"J(, "out_names": ["o", "o"])J",
                                           R"J(, "local_compute_fn": "f")J"};
  std::mt19937 random(5);
  // Each port choice changes from one module to the next one time in
  // three; the rest is drawn anew for each module.
  auto pick = [&](const std::vector<std::string>& from, size_t& at) {
    if (random() % 3 == 0) at = random() % from.size();
    return from[at];
  };
  auto draw = [&](const std::vector<std::string>& from) { return from[random() % from.size()]; };
  size_t forward = 0, in_src = 0, in_dst = 0;
  constexpr int kModules = 400;
  std::string modules, children, providers;
  for (int i = 0; i < kModules; ++i) {
    const std::string I = std::to_string(i);
    absl::StrAppend(&modules, ", \"m", I, R"J(": {"forward": )J", pick(forwards, forward), "}");
    absl::StrAppend(&children, i ? ", " : "", "\"c", I, "\": \"m", I, "\"");
    const std::vector<std::string> has_params = {R"J("params": {}, )J", R"J("params": {}, )J", ""};
    absl::StrAppend(&providers, i ? ", " : "", "\"c", I, "\": {", draw(has_params), R"J("in_src": )J",
                    pick(inputs, in_src), R"J(, "in_dst": )J", pick(inputs, in_dst), draw(extras), "}");
  }
  const std::unique_ptr<Document> parsed =
      ProvidersDocument(R"J("mesh": {"tp": 2}, "parameters": {})J", children, modules, providers);
  ASSERT_NE(parsed, nullptr);
  const Document& doc = *parsed;
  const ModuleTree tree(doc);
  ASSERT_EQ(doc.model_providers.size(), size_t{kModules});

  CleanLayouts clean(doc);
  int clean_ports = 0;
  for (int step = 0; step < 2 * kModules; ++step) {
    const FqnLayout& provider = doc.model_providers[step < kModules ? step : random() % kModules];
    const PathId path = tree.Resolve(doc.Name(provider.fqn));
    ASSERT_NE(path, kNoPath);
    DiagnosticSink found;
    CheckPorts(tree, path, provider.layout, found);
    const bool ports = clean.Ports(tree, path, provider.layout);
    EXPECT_EQ(ports, found.Take().empty()) << doc.Name(provider.fqn);
    clean_ports += ports;
  }
  EXPECT_GT(clean_ports, 20);
  EXPECT_LT(clean_ports, 2 * kModules - 20);
}

}  // namespace
}  // namespace shardplan

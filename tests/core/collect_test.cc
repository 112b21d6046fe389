#include "core/collect.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/glob.h"
#include "core/owners.h"
#include "core/parse.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A native request owns exactly the paths its pattern matches, in path
// order, however collection matches them: patterns that end with '*' run as
// automata along the tree (a path's state from its parent's, dead subtrees
// skipped), the others through quick tests, over chunks of 2,048 paths.
// 400 blocks of 8 modules (lin0, w1, w2x, w3 > sub, lin4 > w5) make 3,202
// paths.
TEST(CollectTest, NativeMatchesAreThePathsThePatternMatches) {
  std::string blocks, modules;
  for (int b = 0; b < 400; ++b) {
    const std::string m = absl::StrCat("b", b);
    absl::StrAppend(&blocks, b ? ", " : "", "\"", b, "\": \"", m, "\"");
    absl::StrAppend(&modules, ", \"", m, "\": {\"children\": {\"lin0\": \"", m, ".0\", \"w1\": \"", m,
                    ".1\", \"w2x\": \"", m, ".2\", \"w3\": \"", m, ".3\", \"lin4\": \"", m, ".4\"}}");
    for (const char* leaf : {".0", ".1", ".2", ".3s", ".4w"}) absl::StrAppend(&modules, ", \"", m, leaf, "\": {}");
    absl::StrAppend(&modules, ", \"", m, ".3\": {\"children\": {\"sub\": \"", m, ".3s\"}}");
    absl::StrAppend(&modules, ", \"", m, ".4\": {\"children\": {\"w5\": \"", m, ".4w\"}}");
  }
  for (const char* pattern : {"blocks.*.w*", "blocks.1*", "blocks.3?.lin4.*", "*.sub*", "*", "blocks.*.w1",
                              "*5", "blocks.[!0-8]*.w3*"}) {
    const std::string text = absl::StrCat(
        R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "model", "modules": {)J",
        R"J("model": {"children": {"blocks": "blocks"}}, "blocks": {"type": "ModuleList", "children": {)J", blocks,
        "}}", modules, R"J(}, "providers": {"native": [{"match": [")J", pattern,
        R"J("], "sharding": {"params": {}, "in_src": {}, "in_dst": {}}}]}})J");
    ParsedDocument parsed = ParseDocument(text, Limits{});
    ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
    const ModuleTree tree(*parsed.document);
    ASSERT_EQ(tree.size(), 3202u);
    std::vector<PathId> want;
    const Glob glob(pattern);
    for (PathId p = 0; p < tree.size(); ++p) {
      if (glob.Matches(tree.fqn(p))) want.push_back(p);
    }
    ASSERT_FALSE(want.empty()) << pattern;
    Owners owners(parsed.document->modules.size());
    DiagnosticSink sink;
    EXPECT_TRUE(CollectOwners(tree, owners, sink)) << pattern;
    std::vector<PathId> got;
    for (const Owner& o : std::as_const(owners).InOrder()) got.push_back(o.path);
    EXPECT_EQ(got, want) << pattern;
  }
}

}  // namespace
}  // namespace shardplan

#include "core/model/module_tree.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/parse.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// root -> {a: blk, b: blk, head: lin}; blk -> {lin: lin}; lin has weight w.
// `blk` is shared (two paths), `lin` appears at three paths, and `w` is one
// parameter reachable under three names (tied).
constexpr char kShared[] = R"J({
  "schema": "shardplan.v1", "mesh": {"tp": 2},
  "parameters": {"w": {"shape": [4, 4]}, "n": {"shape": [4]}},
  "root": "root",
  "modules": {
    "root": {"children": {"a": "blk", "b": "blk", "head": "lin"}, "params": {"norm": "n"}},
    "blk": {"children": {"lin": "lin"}},
    "lin": {"params": {"weight": "w"}},
    "orphan": {}
  }
})J";

std::unique_ptr<Document> Parse(std::string_view json) {
  ParseResult parsed = ParseDocument(json, Limits{});
  EXPECT_FALSE(parsed.error.has_value()) << parsed.error->message;
  return std::move(parsed.document);
}

std::vector<std::string> Fqns(const ModuleTree& tree, PathId from = 0) {
  std::vector<std::string> out;
  for (PathId p = from; p < tree.end(from); ++p) out.emplace_back(tree.fqn(p));
  return out;
}

TEST(ModuleTreeTest, NamedModulesKeepsEverySharedPathInPreOrder) {
  auto doc = Parse(kShared);
  ModuleTree tree(*doc);
  EXPECT_EQ(Fqns(tree), (std::vector<std::string>{"", "a", "a.lin", "b", "b.lin", "head"}));
}

TEST(ModuleTreeTest, EachPathKnowsTheNameItIsReachedBy) {
  auto doc = Parse(kShared);
  ModuleTree tree(*doc);
  std::vector<std::string> names;
  for (PathId p = 0; p < tree.size(); ++p) {
    names.push_back(tree.name(p) == kNoName ? "(root)" : std::string(doc->Name(tree.name(p))));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"(root)", "a", "lin", "b", "lin", "head"}));
}

TEST(ModuleTreeTest, SubtreesAreContiguousRanges) {
  auto doc = Parse(kShared);
  ModuleTree tree(*doc);
  const PathId b = tree.Resolve("b");
  ASSERT_NE(b, kNoPath);
  EXPECT_EQ(Fqns(tree, b), (std::vector<std::string>{"b", "b.lin"}));
  EXPECT_EQ(tree.RelativeName(b, tree.Resolve("b.lin")), "lin");
  EXPECT_EQ(tree.RelativeName(0, tree.Resolve("b.lin")), "b.lin");
  EXPECT_EQ(tree.RelativeName(b, b), "");
}

TEST(ModuleTreeTest, SharedModuleIsOneIdentityAtSeveralPaths) {
  auto doc = Parse(kShared);
  ModuleTree tree(*doc);
  EXPECT_EQ(tree.module(tree.Resolve("a")), tree.module(tree.Resolve("b")));
  EXPECT_EQ(tree.module(tree.Resolve("a.lin")), tree.module(tree.Resolve("head")));
  EXPECT_EQ(tree.first_path(tree.module(tree.Resolve("b.lin"))), tree.Resolve("a.lin"));
}

TEST(ModuleTreeTest, UnreachableModulesHaveNoPath) {
  auto doc = Parse(kShared);
  ModuleTree tree(*doc);
  ModuleId orphan = 0;
  while (doc->Name(doc->modules[orphan].id) != "orphan") ++orphan;
  EXPECT_EQ(tree.first_path(orphan), kNoPath);
}

TEST(ModuleTreeTest, GetSubmoduleFollowsChildNames) {
  auto doc = Parse(kShared);
  ModuleTree tree(*doc);
  EXPECT_EQ(tree.Resolve(""), 0u);
  EXPECT_EQ(tree.fqn(tree.Resolve("a.lin")), "a.lin");
  for (std::string_view missing : {"c", "a.lin.x", "a.", ".a", "a..lin", "norm", "a.lin.weight"}) {
    EXPECT_EQ(tree.Resolve(missing), kNoPath) << missing;
  }
  EXPECT_EQ(tree.ResolveFrom(tree.Resolve("b"), "lin"), tree.Resolve("b.lin"));
}

TEST(ModuleTreeTest, TiedParameterIsOneIdentityUnderSeveralNames) {
  auto doc = Parse(kShared);
  ModuleTree tree(*doc);
  std::vector<std::string> names;
  for (PathId p = 0; p < tree.size(); ++p) {
    for (const auto& [name, param] : doc->modules[tree.module(p)].params) {
      std::string full = tree.fqn(p).empty() ? std::string(doc->Name(name))
                                             : std::string(tree.fqn(p)) + "." + std::string(doc->Name(name));
      names.push_back(full + "=" + std::string(doc->Name(doc->parameters[param].id)));
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"norm=n", "a.lin.weight=w", "b.lin.weight=w", "head.weight=w"}));
}

// The tree's packed copies answer as the modules do, at every path of a
// shared module.
TEST(ModuleTreeTest, PackedModuleFactsMatchTheModules) {
  const std::string text = R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"x": {}, "y": {}},
    "root": "r", "modules": {
      "e": {"forward": ["a", "*args", "**kw"], "family": {"sharding": {"params": {}}},
            "parallel": {"binding_kind": "tp", "axes": ["tp", "dp"]}},
      "r": {"children": {"a": "m", "b": "e", "c": "m", "d": "f"}, "params": {"z": "y"}},
      "m": {"forward": ["input"], "params": {"q": "y", "p": "x"}, "parallel": {"binding_kind": "tp", "axes": ["tp"]}},
      "f": {"family": {"sharding": {"params": {}}, "cached": {"sharding": {"params": {}}}}}}})J";
  std::unique_ptr<Document> doc = Parse(text);
  const ModuleTree tree(*doc);
  auto slots = [&](PathId q) {
    std::vector<std::string> out;
    for (const auto& [name, p] : tree.params(q)) {
      out.push_back(absl::StrCat(doc->Name(name), "=", doc->Name(doc->parameters[p].id)));
    }
    return out;
  };
  auto forward = [&](PathId q) {
    std::vector<std::string> out;
    for (NameId name : tree.forward(q)) out.emplace_back(doc->Name(name));
    return out;
  };
  const PathId a = tree.Resolve("a"), b = tree.Resolve("b"), c = tree.Resolve("c"), d = tree.Resolve("d");
  EXPECT_EQ(slots(0), (std::vector<std::string>{"z=y"}));
  EXPECT_EQ(slots(a), (std::vector<std::string>{"q=y", "p=x"}));
  EXPECT_TRUE(slots(b).empty());
  EXPECT_EQ(slots(c), slots(a));
  EXPECT_EQ(forward(a), (std::vector<std::string>{"input"}));
  EXPECT_EQ(forward(b), (std::vector<std::string>{"a", "args", "kw"}));
  EXPECT_TRUE(forward(0).empty());
  EXPECT_TRUE(tree.var_keyword(b));
  EXPECT_FALSE(tree.var_keyword(a));
  EXPECT_EQ(tree.parallel(a), &*doc->modules[tree.module(a)].parallel);
  EXPECT_EQ(tree.parallel(c), tree.parallel(a));
  EXPECT_EQ(tree.parallel(d), nullptr);
  EXPECT_EQ(doc->Name(tree.binding_kind(c)), "tp");
  EXPECT_EQ(tree.binding_kind(d), kNoName);
  EXPECT_TRUE(tree.cached_family(d));
  EXPECT_FALSE(tree.cached_family(b));  // a family, not applied
  EXPECT_FALSE(tree.cached_family(a));
}

TEST(ModuleTreeTest, KnowsWhetherEveryFqnIsAscii) {
  std::unique_ptr<Document> ascii = Parse(kShared);
  EXPECT_TRUE(ModuleTree(*ascii).ascii());
  std::string text = kShared;
  text.replace(text.find("\"head\""), 6, "\"t\xc3\xaate\"");  // "tête"
  std::unique_ptr<Document> unicode = Parse(text);
  const ModuleTree tree(*unicode);
  EXPECT_FALSE(tree.ascii());
  EXPECT_NE(tree.Resolve("t\xc3\xaate"), kNoPath);
  // The unused module's name does not count: only paths' FQNs do.
  text = kShared;
  text.replace(text.find("\"orphan\": {}"), 12, "\"orphan\": {\"children\": {\"\xc3\xa9\": \"lin\"}}");
  std::unique_ptr<Document> unused = Parse(text);
  EXPECT_TRUE(ModuleTree(*unused).ascii());
}

// Modules with few children or parameters are scanned, those with many
// indexed: both find every name, and nothing else.
TEST(ModuleTreeTest, FindsChildrenAndParametersOfSmallAndLargeModules) {
  for (int n : {1, 8, 9, 300}) {
    std::string params, children, param_ids;
    for (int i = 0; i < n; ++i) {
      const std::string I = std::to_string(i);
      absl::StrAppend(&param_ids, i ? ", " : "", "\"w", I, "\": {}");
      absl::StrAppend(&params, i ? ", " : "", "\"p", I, "\": \"w", I, "\"");
      absl::StrAppend(&children, i ? ", " : "", "\"c", I, "\": \"leaf\"");
    }
    const std::string text = absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {}, "parameters": {)J", param_ids,
                                           R"J(}, "root": "big", "modules": {"leaf": {}, "big": {"children": {)J",
                                           children, "}, \"params\": {", params, "}}}}");
    std::unique_ptr<Document> doc = Parse(text);
    const ModuleTree tree(*doc);
    ModuleTree::Resolver resolver(tree);
    for (int i = 0; i < n; ++i) {
      const std::string I = std::to_string(i);
      const PathId c = tree.Resolve("c" + I);
      ASSERT_NE(c, kNoPath) << n << " " << I;
      EXPECT_EQ(resolver.Resolve("c" + I), c);
      EXPECT_EQ(tree.fqn(c), "c" + I);
      const ModuleTree::ParamRef ref = tree.ResolveParameter(0, "p" + I);
      ASSERT_EQ(ref.module_path, 0u) << n << " " << I;
      EXPECT_EQ(doc->Name(doc->parameters[ref.param].id), "w" + I);
    }
    // Children in order, skipping some: found among the next few siblings,
    // or (past them) by name; a missing name in between finds nothing.
    for (int stride : {2, 3, 11}) {
      ModuleTree::Resolver skipping(tree);
      for (int i = 0; i < n; i += stride) {
        const std::string I = std::to_string(i);
        ASSERT_EQ(skipping.Resolve("c" + I), tree.Resolve("c" + I)) << n << " " << stride << " " << I;
        if (i % 4 == 0) {
          EXPECT_EQ(skipping.Resolve("c" + I + "x"), kNoPath);
        }
      }
    }
    ASSERT_EQ(tree.params(0).size(), static_cast<size_t>(n));
    EXPECT_EQ(doc->Name(tree.params(0).back().first), "p" + std::to_string(n - 1));
    EXPECT_TRUE(tree.params(tree.Resolve("c0")).empty());
    EXPECT_EQ(tree.Resolve("c" + std::to_string(n)), kNoPath);
    EXPECT_EQ(tree.Resolve("p0"), kNoPath);  // a parameter is not a child
    EXPECT_EQ(tree.ResolveParameter(0, "c0").module_path, kNoPath);
    EXPECT_EQ(tree.ResolveParameter(0, "q").module_path, kNoPath);
  }
}

// The resolver reuses the previous FQN's resolved prefix only where it is a
// whole leading segment of the next one: over a sequence mixing siblings,
// prefixes of each other, near misses and malformed names, it answers as
// Resolve does, in every order.
TEST(ModuleTreeTest, ResolverAgreesWithResolveOverAnySequence) {
  std::string text = kShared;
  // Names that extend or shorten each other: "a" and "ab", "lin" and "li";
  // long ones that first differ past a multiple of eight bytes.
  text.replace(text.find(R"("head": "lin")"), 13,
               R"("head": "lin", "ab": "blk", "li": "blk", "a_rather_long_child_name": "blk",)"
               R"( "a_rather_long_child_nome": "blk", "a_rather_long_child_name_2": "blk",)"
               R"( "abcdefgh_xyz": "blk", "abcdefghYxyz": "blk")");
  std::unique_ptr<Document> doc = Parse(text);
  const ModuleTree tree(*doc);
  std::vector<std::string> fqns;
  for (PathId p = 0; p < tree.size(); ++p) fqns.emplace_back(tree.fqn(p));
  for (const char* odd : {"a.", ".a", "a..lin", "a.li", "ab.lin.x", "abc", "a.lin.weight", "norm", "l", ".",
                          "a_rather_long_child_nam", "a_rather_long_child_name.li", "a_rather_long_child_name_2.lin.x"}) {
    fqns.emplace_back(odd);
  }
  // Names that first differ at the start of an eight-byte word.
  {
    ModuleTree::Resolver resolver(tree);
    for (const char* fqn : {"abcdefgh_xyz.lin", "abcdefghYxyz.lin", "abcdefgh_xyz.lin", "abcdefghYxyz"}) {
      ASSERT_EQ(resolver.Resolve(fqn), tree.Resolve(fqn)) << fqn;
    }
    EXPECT_NE(tree.Resolve("abcdefghYxyz.lin"), tree.Resolve("abcdefgh_xyz.lin"));
  }
  // In path order and in reverse (siblings one after another), then mixed.
  for (bool reverse : {false, true}) {
    ModuleTree::Resolver resolver(tree);
    for (size_t i = 0; i < tree.size(); ++i) {
      const PathId p = static_cast<PathId>(reverse ? tree.size() - 1 - i : i);
      ASSERT_EQ(resolver.Resolve(tree.fqn(p)), p) << tree.fqn(p);
    }
  }
  // In path order, skipping paths (found among the next few, or not).
  for (size_t stride = 2; stride <= 6; ++stride) {
    for (size_t first = 0; first < stride; ++first) {
      ModuleTree::Resolver resolver(tree);
      for (size_t i = first; i < tree.size(); i += stride) {
        ASSERT_EQ(resolver.Resolve(tree.fqn(static_cast<PathId>(i))), i) << tree.fqn(static_cast<PathId>(i));
      }
    }
  }
  std::mt19937 random(7);
  ModuleTree::Resolver resolver(tree);
  int found = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string& fqn = fqns[random() % fqns.size()];
    const PathId expected = tree.Resolve(fqn);
    ASSERT_EQ(resolver.Resolve(fqn), expected) << "step " << i << ": " << fqn;
    found += expected != kNoPath;
  }
  EXPECT_GT(found, 1000);  // the sequence is mostly real paths
}

// The resolver splits dotted names once and keeps a few: over names that
// share its cache slots, malformed ones and ones naming no name, from
// several paths and in a mixed order, it answers as ResolveParameter does.
TEST(ModuleTreeTest, ResolverResolvesParametersAsTheTreeDoes) {
  auto doc = Parse(kShared);
  std::vector<NameId> locals;
  for (std::string_view local : {"norm", "a.lin.weight", "head.weight", "weight", "a.lin", "a", ".weight",
                                 "a..lin.weight", "a.lin.", "lin.weight", "zz.weight", "a.zz.weight", "b.lin.weight"}) {
    locals.push_back(doc->names.Intern(local));
  }
  for (int i = 0; i < 40; ++i) locals.push_back(doc->names.Intern(absl::StrCat("x", i, ".weight")));
  const ModuleTree tree(*doc);
  const std::vector<PathId> froms = {0, tree.Resolve("a"), tree.Resolve("a.lin"), tree.Resolve("b")};
  ModuleTree::Resolver resolver(tree);
  std::mt19937 random(11);
  int found = 0;
  for (int step = 0; step < 3000; ++step) {
    const NameId local = locals[random() % locals.size()];
    const PathId from = froms[random() % froms.size()];
    const ModuleTree::ParamRef want = tree.ResolveParameter(from, doc->Name(local));
    const ModuleTree::ParamRef got = resolver.ResolveParameter(from, local);
    ASSERT_EQ(got.module_path, want.module_path) << doc->Name(local) << " from " << tree.fqn(from);
    ASSERT_EQ(got.name, want.name) << doc->Name(local);
    ASSERT_EQ(got.param, want.param) << doc->Name(local);
    found += want.module_path != kNoPath;
  }
  EXPECT_GT(found, 50);
  EXPECT_NE(resolver.ResolveParameter(0, doc->names.Find("a.lin.weight")).module_path, kNoPath);
}

}  // namespace
}  // namespace shardplan

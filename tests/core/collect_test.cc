#include "core/ownership/collect.h"
#include "core/ownership/native_match.h"
#include "core/ownership/nesting.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/text/glob.h"
#include "core/diagnostics/sink.h"
#include "core/ownership/owners.h"
#include "core/model/parse.h"
#include "gtest/gtest.h"
#include "tests/support/draws.h"

namespace shardplan {
namespace {

// 400 blocks of 8 modules (lin0, w1, w2x, w3 > sub, lin4 > w5) make 3,202
// paths; one native request with the patterns of `match` (a JSON array).
std::string BlocksDocument(const std::string& match) {
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
  return absl::StrCat(
      R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "model", "modules": {)J",
      R"J("model": {"children": {"blocks": "blocks"}}, "blocks": {"type": "ModuleList", "children": {)J", blocks, "}}",
      modules, R"J(}, "providers": {"native": [{"match": )J", match,
      R"J(, "sharding": {"params": {}, "in_src": {}, "in_dst": {}}}]}})J");
}

// The owners' paths, in entry order.
std::vector<PathId> OwnerPaths(const Owners& owners) {
  std::vector<PathId> paths;
  for (const Owner& o : owners.InOrder()) paths.push_back(o.path);
  return paths;
}

// A native request owns exactly the paths its pattern matches, in path
// order, however collection matches them: patterns that end with '*' run as
// automata along the tree (a path's state from its parent's, dead subtrees
// skipped), the others through quick tests, over chunks of 2,048 paths.
TEST(CollectTest, NativeMatchesAreThePathsThePatternMatches) {
  for (const char* pattern : {"blocks.*.w*", "blocks.1*", "blocks.3?.lin4.*", "*.sub*", "*", "blocks.*.w1",
                              "*5", "blocks.[!0-8]*.w3*"}) {
    ParseResult parsed = ParseDocument(BlocksDocument(absl::StrCat("[\"", pattern, "\"]")), Limits{});
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
    EXPECT_EQ(OwnerPaths(owners), want) << pattern;
  }
}

// Automata of several patterns step through the same child names (one
// table of steps per thread, keyed by pattern, state and name): each
// pattern still owns the paths it matches, pattern by pattern, a module
// once.
TEST(CollectTest, PatternsOfOneRequestMatchOnTheirOwn) {
  const std::vector<std::string> patterns = {"*.sub*", "blocks.1*", "blocks.*.w*", "*.lin4.*", "blocks.[!0-8]*.w3*",
                                             "*w*"};
  std::string match;
  for (const std::string& pattern : patterns) absl::StrAppend(&match, match.empty() ? "[" : ", ", "\"", pattern, "\"");
  ParseResult parsed = ParseDocument(BlocksDocument(match + "]"), Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const ModuleTree tree(*parsed.document);
  std::vector<PathId> want;
  std::vector<bool> added(tree.size(), false);
  for (const std::string& pattern : patterns) {
    const Glob glob(pattern);
    for (PathId p = 0; p < tree.size(); ++p) {
      if (glob.Matches(tree.fqn(p)) && !added[p]) {
        added[p] = true;
        want.push_back(p);
      }
    }
  }
  Owners owners(parsed.document->modules.size());
  DiagnosticSink sink;
  EXPECT_TRUE(CollectOwners(tree, owners, sink));
  EXPECT_EQ(OwnerPaths(owners), want);
}

// Native requests add owners request by request, pattern by pattern, each
// pattern's hits in path order, a module hit twice by one request once; a
// module with an owner already is multiple-owners, a pattern without a hit
// native-no-match. Whether a request's hits are all added (checked and
// reserved in parallel) or not, and with a shared module or without, the
// owners and diagnostics are those of that rule, applied one hit at a time,
// and NativePatterns names the pattern that added each owner.
TEST(CollectTest, NativeRequestsAddEachModuleOnceInPatternOrder) {
  const std::vector<std::vector<std::string>> requests = {
      {"blocks.2?", "nothing*", "blocks.3*.lin"},  // all added
      {"blocks.1*", "blocks.*.lin"},               // hits twice, and owned modules
      {"s*", "blocks.4"},                          // the shared module, if any
      {"blocks.5?", "blocks.55"},                  // hits a module twice
      {"blocks.6?", "blocks.20"},                  // hits an owned module
      {"blocks.7?"},                               // one pattern, all added
      {"blocks.7*"},                               // one pattern, owned modules
      {"blocks.8*", "blocks.78?"},                 // after it
  };
  for (bool shared : {false, true}) {
    std::string children, modules;
    for (int b = 0; b < 2500; ++b) {
      absl::StrAppend(&children, b ? ", " : "", "\"", b, "\": \"b", b, "\"");
      absl::StrAppend(&modules, ", \"b", b, "\": {\"children\": {\"lin\": \"b", b, ".lin\"}}, \"b", b, ".lin\": {}");
    }
    std::string native;
    for (const std::vector<std::string>& patterns : requests) {
      std::string match;
      for (const std::string& pattern : patterns) absl::StrAppend(&match, match.empty() ? "" : ", ", "\"", pattern, "\"");
      absl::StrAppend(&native, native.empty() ? "" : ", ", "{\"match\": [", match,
                      R"J(], "sharding": {"params": {}, "in_src": {}, "in_dst": {}}})J");
    }
    const std::string text = absl::StrCat(
        R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "model", "modules": {)J",
        R"J("model": {"children": {"blocks": "blocks")J", shared ? R"J(, "s1": "sh", "s2": "sh"}}, "sh": {})J" : "}}",
        R"J(, "blocks": {"type": "ModuleList", "children": {)J", children, "}}", modules,
        R"J(}, "providers": {"native": [)J", native, "]}}");
    ParseResult parsed = ParseDocument(text, Limits{});
    ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
    const ModuleTree tree(*parsed.document);
    ASSERT_EQ(tree.shared(), shared);

    // The rule, one hit at a time.
    std::vector<PathId> want;
    std::vector<uint32_t> want_patterns;  // per owner, the pattern that added it
    std::vector<std::string> want_found;  // code and pointer (or FQN)
    std::vector<int> owner_of(parsed.document->modules.size(), -1);  // request
    for (size_t r = 0; r < requests.size(); ++r) {
      std::vector<bool> hit(parsed.document->modules.size(), false);
      for (size_t k = 0; k < requests[r].size(); ++k) {
        const Glob glob(requests[r][k]);
        bool any = false;
        for (PathId p = 0; p < tree.size(); ++p) {
          if (!(glob.is_literal() ? tree.fqn(p) == requests[r][k] : glob.Matches(tree.fqn(p)))) continue;
          any = true;
          const ModuleId m = tree.module(p);
          if (hit[m]) continue;
          hit[m] = true;
          if (owner_of[m] >= 0) {
            want_found.push_back(absl::StrCat("multiple-owners ", tree.fqn(p)));
            continue;
          }
          owner_of[m] = static_cast<int>(r);
          want.push_back(p);
          want_patterns.push_back(static_cast<uint32_t>(k));
        }
        if (!any) want_found.push_back(absl::StrCat("native-no-match /providers/native/", r, "/match/", k));
      }
    }
    ASSERT_GT(want.size(), 100u);

    Owners owners(parsed.document->modules.size());
    DiagnosticSink sink;
    EXPECT_FALSE(CollectOwners(tree, owners, sink));
    EXPECT_EQ(OwnerPaths(owners), want) << shared;
    EXPECT_EQ(NativePatterns(tree, owners.InOrder()), want_patterns) << shared;
    std::vector<std::string> found;
    for (const Diagnostic& d : sink.Take()) {
      found.push_back(absl::StrCat(d.code, " ", d.code == "native-no-match" ? *d.pointer : *d.fqn));
    }
    EXPECT_EQ(found, want_found) << shared;
  }
}

// Overlaps are found per owner from the active owners above it, which a
// run of siblings shares: against every (inner, outer) pair of active
// owners, walked up one at a time, for owners listed in a shuffled order
// (an owner's outers in entry order) across several chunks of 4,096.
TEST(CollectTest, NestingReportsEveryOverlapInEntryOrder) {
  const char* const kinds[] = {"tp", "mesh", "none", "dp"};
  Draws next(12345);
  // 1,500 blocks l<i> > {a, b, c > d}: 7,501 paths; each module has a kind.
  std::string modules, children;
  std::vector<std::string> fqns;
  for (int i = 0; i < 1500; ++i) {
    const std::string l = absl::StrCat("l", i);
    absl::StrAppend(&children, i ? ", " : "", "\"", l, "\": \"", l, "\"");
    auto module = [&](const std::string& id, const std::string& kids) {
      absl::StrAppend(&modules, "\"", id, R"J(": {"forward": ["x"], "children": {)J", kids,
                      R"J(}, "parallel": {"binding_kind": ")J", kinds[next(4)], R"J(", "axes": ["tp"]}}, )J");
    };
    module(l, absl::StrCat("\"a\": \"", l, ".a\", \"b\": \"", l, ".b\", \"c\": \"", l, ".c\""));
    module(l + ".a", "");
    module(l + ".b", "");
    module(l + ".c", absl::StrCat("\"d\": \"", l, ".c.d\""));
    module(l + ".c.d", "");
    for (const char* f : {"", ".a", ".b", ".c", ".c.d"}) {
      if (next(4) != 0) fqns.push_back(l + f);  // three owners in four
    }
  }
  for (size_t i = fqns.size() - 1; i > 0; --i) std::swap(fqns[i], fqns[next(i + 1)]);
  std::string providers;
  for (const std::string& fqn : fqns) {
    absl::StrAppend(&providers, providers.empty() ? "" : ", ", "\"", fqn,
                    R"J(": {"params": {}, "in_src": {"x": {}}, "in_dst": {"x": {}}})J");
  }
  const std::string text = absl::StrCat(
      R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "m", "modules": {)J", modules,
      R"J("m": {"children": {)J", children, R"J(}}}, "providers": {"sharding": {)J", providers, "}}}");
  ParseResult parsed = ParseDocument(text, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const ModuleTree tree(*parsed.document);
  Owners owners(parsed.document->modules.size());
  DiagnosticSink collected;
  ASSERT_TRUE(CollectOwners(tree, owners, collected));
  ASSERT_GT(owners.InOrder().size(), 4096u);

  // Every pair, walked up one owner at a time.
  const Document& doc = *parsed.document;
  auto kind = [&](const Owner& o) { return doc.Name(o.parallel->binding_kind); };
  std::vector<int> entry_at(tree.size(), -1);
  const absl::Span<const Owner> entries = owners.InOrder();
  for (size_t e = 0; e < entries.size(); ++e) entry_at[entries[e].path] = static_cast<int>(e);
  std::vector<std::string> want;
  for (const Owner& inner : entries) {
    if (kind(inner) == "none") continue;
    std::vector<int> outers;
    for (PathId a = tree.parent(inner.path); a != kNoPath; a = tree.parent(a)) {
      if (entry_at[a] < 0) continue;
      const std::string_view k = kind(entries[entry_at[a]]);
      if (k != "none" && (k == kind(inner) || k == "mesh" || kind(inner) == "mesh")) outers.push_back(entry_at[a]);
    }
    std::sort(outers.begin(), outers.end());
    for (int i : outers) want.push_back(FormatMessage(Code::kOverlappingCommunication, {tree.fqn(entries[i].path), tree.fqn(inner.path)}));
  }
  DiagnosticSink sink;
  CheckNesting(tree, owners, sink);
  std::vector<std::string> got;
  for (const Diagnostic& d : sink.Take()) got.push_back(d.message);
  ASSERT_GT(want.size(), 1000u);
  EXPECT_EQ(got, want);
}

// A native hit on a module whose subtree holds a module of a family's
// subtree is reported, whichever of the two is above: against that rule
// checked path by path, over 200 blocks > 4 children > a leaf with
// families drawn among the children and the leaves.
TEST(CollectTest, NativeHitsTouchingAFamilyAreReported) {
  Draws next(777);
  const std::string family =
      R"J(, "family": {"parallel": false, "sharding": {"params": {}, "in_src": {}, "in_dst": {}}})J";
  std::string modules, blocks;
  for (int b = 0; b < 200; ++b) {
    const std::string m = absl::StrCat("b", b);
    absl::StrAppend(&blocks, b ? ", " : "", "\"", b, "\": \"", m, "\"");
    std::string kids;
    for (int c = 0; c < 4; ++c) {
      const std::string id = absl::StrCat(m, ".", c);
      absl::StrAppend(&kids, c ? ", " : "", "\"c", c, "\": \"", id, "\"");
      absl::StrAppend(&modules, ", \"", id, R"J(": {"forward": ["x"], "children": {"leaf": ")J", id, ".l\"}",
                      next(8) == 0 ? family : "", "}, \"", id, R"J(.l": {"forward": ["x"])J",
                      next(8) == 0 ? family : "", "}");
    }
    absl::StrAppend(&modules, ", \"", m, R"J(": {"forward": ["x"], "children": {)J", kids, "}}");
  }
  const std::vector<std::string> patterns = {"blocks.*.c*.leaf", "blocks.*.c*", "blocks.*"};
  std::string native;
  for (const std::string& pattern : patterns) {
    absl::StrAppend(&native, native.empty() ? "" : ", ", R"J({"match": [")J", pattern,
                    R"J("], "sharding": {"params": {}, "in_src": {}, "in_dst": {}}})J");
  }
  const std::string text = absl::StrCat(
      R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "model", "modules": {)J",
      R"J("model": {"forward": ["x"], "children": {"blocks": "blocks"}}, "blocks": {"type": "ModuleList", "children": {)J",
      blocks, "}}", modules, R"J(}, "providers": {"native": [)J", native, "]}}");
  ParseResult parsed = ParseDocument(text, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  const ModuleTree tree(doc);
  ASSERT_FALSE(tree.shared());

  // The rule: a path lies in a family's subtree when it or an ancestor is a
  // family's module; a hit touches one when some path below it does.
  std::vector<bool> family_module(doc.modules.size(), false);
  for (ModuleId m : doc.family_modules) family_module[m] = true;
  auto in_family = [&](PathId q) {
    for (PathId a = q; a != kNoPath; a = tree.parent(a)) {
      if (family_module[tree.module(a)]) return true;
    }
    return false;
  };
  std::vector<std::string> want;
  for (const std::string& pattern : patterns) {
    const Glob glob(pattern);
    for (PathId p = 0; p < tree.size(); ++p) {
      if (!glob.Matches(tree.fqn(p))) continue;
      bool touches = false;
      for (PathId q = p; q < tree.end(p) && !touches; ++q) touches = in_family(q);
      if (touches) want.push_back(std::string(tree.fqn(p)));
    }
  }
  Owners owners(doc.modules.size());
  DiagnosticSink sink;
  CollectOwners(tree, owners, sink);
  std::vector<std::string> got;
  for (const Diagnostic& d : sink.Take()) {
    if (d.code == "native-overlaps-family") got.push_back(*d.fqn);
  }
  ASSERT_GT(want.size(), 100u);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace shardplan

#include "core/ownership/native_match.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/sink.h"
#include "core/model/parse.h"
#include "core/ownership/collect.h"
#include "core/ownership/owners.h"
#include "core/text/glob.h"
#include "gtest/gtest.h"
#include "tests/support/draws.h"

namespace shardplan {
namespace {

// The characters of UTF-8 text, each as its own string.
std::vector<std::string> Characters(const std::string& text) {
  std::vector<std::string> out;
  for (unsigned char c : text) {
    if ((c & 0xc0) == 0x80) {
      out.back() += static_cast<char>(c);
    } else {
      out.emplace_back(1, static_cast<char>(c));
    }
  }
  return out;
}

// A random model: a root with `width` children, a module each, then
// `depth` levels of a few modules each, each module holding up to three of
// the next level's (shared modules: several paths), under names made of
// short pieces, non-ASCII ones unless `ascii`.
std::string RandomModules(Draws& draw, bool ascii, int width, int depth) {
  static const std::vector<std::string> kAscii = {"a", "b", "ab", "proj", "x1", "0", "1", "12", "w", "gate"};
  static const std::vector<std::string> kWide = {"\xc3\xa9", "\xc3\xbc", "\xe6\x97\xa5\xe6\x9c\xac",
                                                 "\xf0\x9f\x99\x82"};
  const auto name = [&] {
    std::string out;
    for (size_t n = 1 + draw(2); n-- > 0;) {
      out += !ascii && draw(4) == 0 ? kWide[draw(kWide.size())] : kAscii[draw(kAscii.size())];
    }
    return out;
  };
  const int level_size = 6;
  // Level 0: the root's own children, a module each.
  std::string modules = R"J("root": {"children": {)J";
  for (int c = 0; c < width; ++c) {
    absl::StrAppend(&modules, c ? ", " : "", "\"", c % 3 == 0 ? absl::StrCat(c) : absl::StrCat(name(), "_", c),
                    "\": \"m0_", c, "\"");
  }
  modules += "}}";
  for (int c = 0; c < width; ++c) {
    absl::StrAppend(&modules, ", \"m0_", c, "\": {\"children\": {");
    for (size_t k = 0, n = draw(3); k < n; ++k) {
      absl::StrAppend(&modules, k ? ", " : "", "\"", name(), k, "\": \"m1_", draw(level_size), "\"");
    }
    modules += "}}";
  }
  for (int level = 1; level <= depth; ++level) {
    for (int m = 0; m < level_size; ++m) {
      absl::StrAppend(&modules, ", \"m", level, "_", m, "\": {\"children\": {");
      if (level < depth) {
        for (size_t c = 0, n = draw(4); c < n; ++c) {
          // The index keeps sibling names distinct.
          absl::StrAppend(&modules, c ? ", " : "", "\"", name(), c, "\": \"m", level + 1, "_", draw(level_size), "\"");
        }
      }
      modules += "}}";
    }
  }
  return modules;
}

// A random pattern: most often an FQN of `tree` (or a part of it) with
// some characters turned into wildcards or sets, literal or not, and with
// a literal tail or not.
std::string RandomPattern(Draws& draw, const ModuleTree& tree) {
  const std::vector<std::string> chars = Characters(std::string(tree.fqn(draw(tree.size()))));
  std::string pattern;
  if (draw(6) == 0) pattern += "*";
  for (size_t i = draw(3) == 0 ? draw(chars.size() + 1) : 0; i < chars.size(); ++i) {
    switch (draw(24)) {
      case 0:
        pattern += "*";
        i += draw(4);
        break;
      case 1:
        pattern += "?";
        break;
      case 2:
        absl::StrAppend(&pattern, "[", chars[i], "]");
        break;
      case 3:
        absl::StrAppend(&pattern, "[!", chars[i], "]");
        break;
      case 4:
        pattern += "[0-9]";
        break;
      case 5:
        pattern += "[\xc3\xa0-\xc3\xbf]";
        break;
      default:
        pattern += chars[i];
    }
  }
  switch (draw(8)) {
    case 0:
      pattern += "*";
      break;
    case 1:
      pattern += "?";
      break;
    case 2:
      pattern += "[a-z]";
      break;
    case 3:
      pattern += draw(2) ? ".proj" : "1";
      break;
    default:
      break;
  }
  return pattern;
}

// The plain rule: each pattern tested on every path.
std::vector<std::vector<PathId>> ScanEveryPath(const ModuleTree& tree, const std::vector<Glob>& globs) {
  std::vector<std::vector<PathId>> matches(globs.size());
  for (size_t g = 0; g < globs.size(); ++g) {
    for (PathId p = 0; p < tree.size(); ++p) {
      if (globs[g].Matches(tree.fqn(p))) matches[g].push_back(p);
    }
  }
  return matches;
}

// Per owner, the first pattern of its native request that matches its
// FQN, each tried in turn.
std::vector<uint32_t> FirstPatternByScan(const ModuleTree& tree, absl::Span<const Owner> owners) {
  const Document& doc = tree.doc();
  std::vector<uint32_t> patterns(owners.size(), kNotNative);
  for (size_t i = 0; i < owners.size(); ++i) {
    const Origin& origin = owners[i].layout->origin;
    if (origin.kind != Origin::Kind::kNativeSharding) continue;
    const NativeRequest& request = doc.native[origin.index];
    for (uint32_t k = 0; k < request.match.size(); ++k) {
      if (Glob(doc.Name(request.match[k])).Matches(tree.fqn(owners[i].path))) {
        patterns[i] = k;
        break;
      }
    }
  }
  return patterns;
}

// MatchingPaths and NativePatterns, which test a pattern only on the
// paths below its literal prefix that end with its literal tail, find what
// testing every pattern on every path finds: random models (ASCII or not,
// a few paths to several chunks of 4,096) and random patterns (literal
// tails, trailing wildcards, '?', sets, literal patterns, shared tails),
// in native requests of a few patterns each.
TEST(NativeMatchTest, IndexedMatchingEqualsScanningEveryPath) {
  Draws draw(40);
  size_t matched = 0, most_owned = 0, wide = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const bool ascii = trial % 2 == 0;
    const bool big = trial % 20 == 19;
    const std::string modules = RandomModules(draw, ascii, big ? 5000 : 1 + static_cast<int>(draw(8)), 3);
    const std::string model = absl::StrCat(
        R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "root", "modules": {)J", modules,
        "}");
    ParseResult bare = ParseDocument(model + "}", Limits{});
    ASSERT_FALSE(bare.error.has_value()) << bare.error->message;
    const ModuleTree bare_tree(*bare.document);

    std::vector<std::string> patterns;
    std::string native;
    for (int r = 0, requests = 1 + static_cast<int>(draw(12)); r < requests; ++r) {
      std::string match;
      for (size_t k = 0, n = 1 + draw(4); k < n; ++k) {
        patterns.push_back(RandomPattern(draw, bare_tree));
        absl::StrAppend(&match, k ? ", " : "", "\"", patterns.back(), "\"");
      }
      absl::StrAppend(&native, r ? ", " : "", "{\"match\": [", match,
                      R"J(], "sharding": {"params": {}, "in_src": {}, "in_dst": {}}})J");
    }
    ParseResult parsed =
        ParseDocument(absl::StrCat(model, R"J(, "providers": {"native": [)J", native, "]}}"), Limits{});
    ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
    const ModuleTree tree(*parsed.document);
    ASSERT_TRUE(!ascii || tree.ascii());
    wide += !tree.ascii();

    std::vector<Glob> globs;
    for (const std::string& pattern : patterns) globs.emplace_back(pattern);
    const std::vector<std::vector<PathId>> want = ScanEveryPath(tree, globs);
    EXPECT_EQ(MatchingPaths(tree, globs), want) << "trial " << trial;
    for (const std::vector<PathId>& paths : want) matched += paths.size();

    Owners owners(parsed.document->modules.size());
    DiagnosticSink sink;
    CollectOwners(tree, owners, sink);
    EXPECT_EQ(NativePatterns(tree, owners.InOrder()), FirstPatternByScan(tree, owners.InOrder())) << "trial " << trial;
    most_owned = std::max(most_owned, owners.InOrder().size());
  }
  // The cases are not trivial: some trial's native owners span several
  // chunks of 4,096.
  EXPECT_GT(matched, 20000u);
  EXPECT_GT(most_owned, 4096u);
  EXPECT_GT(wide, 20u);
}

// Many patterns, each with its own literal tail, or sharing one: each
// finds exactly its own paths.
TEST(NativeMatchTest, ManyTailsEachFindTheirOwnPaths) {
  std::string children, modules;
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&children, i ? ", " : "", "\"", i, "\": \"l", i, "\"");
    absl::StrAppend(&modules, ", \"l", i, "\": {\"children\": {\"proj\": \"p\"}}");
  }
  ParseResult parsed = ParseDocument(
      absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "root", "modules": {)J",
                   R"J("root": {"children": {"layers": "layers"}}, "p": {}, "layers": {"children": {)J", children, "}}",
                   modules, "}}"),
      Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const ModuleTree tree(*parsed.document);
  std::vector<Glob> globs;
  for (int i = 0; i < n; ++i) {
    globs.emplace_back(absl::StrCat("*.", i, ".proj"));
    globs.emplace_back(absl::StrCat("layers.", i, ".*j"));  // all share "j"; the prefix narrows
    globs.emplace_back(absl::StrCat("*", i));
  }
  EXPECT_EQ(MatchingPaths(tree, globs), ScanEveryPath(tree, globs));
}

// A tree: layers.{0..11}, each with blocks.{a, bb} holding "proj", and an
// "mlp" with "up".
std::unique_ptr<Document> NestedDocument() {
  std::string layers;
  for (int i = 0; i < 12; ++i) absl::StrAppend(&layers, i ? ", " : "", "\"", i, "\": \"layer\"");
  ParseResult parsed = ParseDocument(
      absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "root", "modules": {)J",
                   R"J("root": {"children": {"layers": "list"}}, "list": {"children": {)J", layers, "}},",
                   R"J("layer": {"children": {"blocks": "blocks", "mlp": "mlp"}},)J",
                   R"J("blocks": {"children": {"a": "block", "bb": "block"}}, "block": {"children": {"proj": "leaf"}},)J",
                   R"J("mlp": {"children": {"up": "leaf"}}, "leaf": {}}})J"),
      Limits{});
  EXPECT_FALSE(parsed.error.has_value()) << parsed.error->message;
  return std::move(parsed.document);
}

std::optional<std::vector<std::string>> Narrower(const ModuleTree& tree, std::string_view pattern) {
  const std::vector<std::vector<PathId>> hits = MatchingPaths(tree, {Glob(pattern)});
  return NarrowerPatterns(tree, pattern, hits[0]);
}

TEST(NativeMatchTest, NarrowerPatternsMatchOnlyTheOuterHitsOfAPatternThatMatchesTooDeep) {
  const std::unique_ptr<Document> doc = NestedDocument();
  const ModuleTree tree(*doc);
  using Patterns = std::vector<std::string>;
  // The last '*' alone, made one segment: digits or not, per length.
  EXPECT_EQ(Narrower(tree, "layers.*"), (Patterns{"layers.[0-9]", "layers.[0-9][0-9]"}));
  EXPECT_EQ(Narrower(tree, "layers.*.blocks.*"),
            (Patterns{"layers.*.blocks.[!.]", "layers.*.blocks.[!.][!.]"}));
  // Hits that do not nest: nothing to narrow.
  EXPECT_EQ(Narrower(tree, "layers.*.blocks.*.proj"), std::nullopt);
  EXPECT_EQ(Narrower(tree, "layers.1*"), std::nullopt);  // layers.1, layers.10, layers.11 and what they hold
  // The '*' of "mlp*" crosses the dot to "up" and stays: the patterns made
  // would still match too deep, so there are none.
  EXPECT_EQ(Narrower(tree, "layers.*.mlp*"), std::nullopt);
  // What the patterns made match is exactly the outer hits.
  for (const char* pattern : {"layers.*", "layers.*.blocks.*"}) {
    const Patterns narrower = *Narrower(tree, pattern);
    const std::vector<PathId> hits = MatchingPaths(tree, {Glob(pattern)})[0];
    std::vector<Glob> globs(narrower.begin(), narrower.end());
    std::vector<PathId> matched;
    for (const std::vector<PathId>& m : MatchingPaths(tree, globs)) {
      matched.insert(matched.end(), m.begin(), m.end());
    }
    std::sort(matched.begin(), matched.end());
    size_t depth = std::count(std::string_view(pattern).begin(), std::string_view(pattern).end(), '.');
    std::vector<PathId> outer;
    for (PathId p : hits) {
      if (static_cast<size_t>(std::count(tree.fqn(p).begin(), tree.fqn(p).end(), '.')) == depth) outer.push_back(p);
    }
    EXPECT_EQ(matched, outer) << pattern;
    EXPECT_LT(outer.size(), hits.size()) << pattern;
  }
}

}  // namespace
}  // namespace shardplan

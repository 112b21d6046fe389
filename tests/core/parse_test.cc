#include "core/model/parse.h"
#include "core/exec/parallel.h"
#include "core/text/json_pointer.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

constexpr char kValid[] = R"J({
  "schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
  "parameters": {"w": {"shape": [8, 4], "dtype": "bfloat16"}},
  "root": "m",
  "modules": {"m": {"type": "Linear", "forward": ["input", "*args", "**kwargs"], "params": {"weight": "w"}}},
  "providers": {"sharding": {"": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}}
})J";

// Replaces the first occurrence of `from` in kValid.
std::string Edit(std::string_view from, std::string_view to) {
  std::string text = kValid;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  return text;
}

// The invalid-document diagnostic for `json`, or "" when it parses.
Diagnostic Invalid(std::string_view json, Limits limits = {}) {
  ParseResult parsed = ParseDocument(json, limits);
  if (!parsed.error) return Diagnostic{};
  EXPECT_EQ(parsed.error->code, "invalid-document");
  EXPECT_EQ(parsed.error->severity, Severity::kError);
  return *parsed.error;
}

TEST(ParseTest, ValidDocumentParses) {
  ParseResult parsed = ParseDocument(kValid, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  ASSERT_EQ(doc.mesh.size(), 2u);
  EXPECT_EQ(doc.Name(doc.mesh[0].name), "dp");
  EXPECT_EQ(doc.mesh[1].size, 4);
  EXPECT_EQ(doc.parameters[0].dtype, Dtype::kBfloat16);
  const Module& m = doc.modules[0];
  ASSERT_EQ(m.forward.size(), 3u);
  EXPECT_EQ(doc.Name(m.forward[1]), "args");
  EXPECT_EQ(doc.Name(m.forward[2]), "kwargs");
  EXPECT_TRUE(m.var_keyword);
  ASSERT_EQ(doc.model_providers.size(), 1u);
  EXPECT_EQ(doc.PointerOf(doc.model_providers[0].layout.origin), "/providers/sharding/");
}

// Recurring names (types, child, parameter and forward names) go through a
// small cache keyed by size and end characters: names that share those must
// still keep their own ids, and forward's first plain name is the input.
TEST(ParseTest, RecurringNamesThatLookAlikeKeepTheirOwnIds) {
  std::string modules = R"J("m": {"children": {)J";
  for (int i = 0; i < 40; ++i) modules += (i ? ", " : "") + absl::StrCat("\"c", i + 10, "x\": \"m", i, "\"");
  modules += "}}";
  for (int i = 0; i < 40; ++i) {
    absl::StrAppend(&modules, ", \"m", i, "\": {\"type\": \"T", i % 2 ? "a" : "b", "z\", ",
                    "\"forward\": [\"*", i % 2 ? "p" : "q", "w\", \"", i % 2 ? "q" : "p", "w\"], ",
                    "\"params\": {\"w", i % 3, "z\": \"w\"}}");
  }
  ParseResult parsed = ParseDocument(absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2},
    "parameters": {"w": {}}, "root": "m", "modules": {)J", modules, "}}"), Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  const Module& root = doc.modules[0];
  ASSERT_EQ(root.children.size(), 40u);
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(doc.Name(root.children[i].first), absl::StrCat("c", i + 10, "x"));
    const Module& m = doc.modules[i + 1];
    EXPECT_EQ(doc.Name(m.type), i % 2 ? "Taz" : "Tbz");
    EXPECT_EQ(doc.Name(m.forward[0]), i % 2 ? "pw" : "qw");
    EXPECT_EQ(doc.Name(m.first_input), i % 2 ? "qw" : "pw");
    EXPECT_EQ(doc.Name(m.params[0].first), absl::StrCat("w", i % 3, "z"));
  }
}

// The reading stage hashes the names the walk will intern (Parser::Prepare):
// a module's children, then its params, as ParseModule takes them, whatever
// the order of the members; the walk takes a hash only for the very name it
// was made from. A module that gives params before children, escaped ids
// (decoded into the batch's arena, not views of the text) and a reference
// given twice must link every reference to its own target.
TEST(ParseTest, ReferencesLinkWhateverTheOrderOfTheirMembers) {
  ParseResult parsed = ParseDocument(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2},
    "parameters": {"w": {"shape": [2]}, "b": {"shape": [3]}, "\u00e9": {"shape": [4]}},
    "root": "m",
    "modules": {
      "m": {"params": {"bias": "b", "weight": "w"}, "children": {"x": "n\\t", "y": "o", "z": "n\\t"}},
      "n\\t": {"params": {"g": "é", "h": "w"}},
      "o": {"children": {"p": "q"}, "params": {"k": "b"}},
      "q": {}}})J",
                                     Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  auto param = [&](const Module& m, size_t i) { return doc.Name(doc.parameters[m.params[i].second].id); };
  auto child = [&](const Module& m, size_t i) { return doc.Name(doc.modules[m.children[i].second].id); };
  const Module& m = doc.modules[0];
  EXPECT_EQ(param(m, 0), "b");
  EXPECT_EQ(param(m, 1), "w");
  EXPECT_EQ(child(m, 0), "n\\t");
  EXPECT_EQ(child(m, 1), "o");
  EXPECT_EQ(child(m, 2), "n\\t");
  EXPECT_EQ(param(doc.modules[1], 0), "\u00e9");
  EXPECT_EQ(param(doc.modules[1], 1), "w");
  EXPECT_EQ(child(doc.modules[2], 0), "q");
  EXPECT_EQ(param(doc.modules[2], 0), "b");
}

TEST(ParseTest, TruncatedJsonNamesLineAndColumn) {
  std::string text = kValid;
  text.resize(text.size() / 2);
  Diagnostic d = Invalid(text);
  EXPECT_NE(d.message.find("malformed JSON at line"), std::string::npos) << d.message;
}

TEST(ParseTest, TrailingGarbageAndInvalidUtf8AreRefused) {
  EXPECT_NE(Invalid(std::string(kValid) + " {}").message, "");
  EXPECT_NE(Invalid(Edit("\"Linear\"", "\"Lin\xff\"")).message, "");
}

// The UTF-8 check reads 32, then 8 bytes at a time: the first bad byte is
// found at every position within and across those blocks, after valid
// multi-byte characters too.
TEST(ParseTest, TheFirstNulOrInvalidByteIsFoundAtAnyOffset) {
  const std::string prefix = "{\"schema\": \"";
  for (const std::string& before : {std::string(), std::string("\xc3\xa9"), std::string("\xf0\x9f\x98\x80")}) {
    for (size_t at = 0; at < 80; ++at) {
      for (const std::string& bad : {std::string(1, '\0'), std::string("\xff"), std::string("\xc3("),
                                     std::string("\xed\xa0\x80")}) {
        std::string text = prefix + before + std::string(at, 'a') + bad + std::string(100, 'b') + "\"}";
        const size_t offset = prefix.size() + before.size() + at;
        const std::string what = bad[0] == '\0' ? "NUL byte" : "invalid UTF-8";
        EXPECT_EQ(Invalid(text).message,
                  absl::StrCat(what, " at line 1, column ", offset + 1, " (offset ", offset, ")"))
            << "at " << at << " after " << before.size() << " bytes";
      }
    }
  }
}

// With threads the text is checked while it is read: a bad byte after
// whatever reading it finds (a syntax error, a schema error, a NUL byte
// that ends the JSON early, a whole valid document), in a map long enough
// to be read in several batches, is still the error, as on one thread.
TEST(ParseTest, ABadByteIsTheErrorWhateverReadingTheTextFinds) {
  std::string parameters;
  for (int i = 0; i < 3000; ++i) absl::StrAppend(&parameters, i ? ", " : "", "\"p", i, "\": {\"shape\": [", i + 1, "]}");
  const std::string large = Edit("\"w\": {\"shape\": [8, 4], \"dtype\": \"bfloat16\"}",
                                 absl::StrCat("\"w\": {\"shape\": [8, 4]}, ", parameters));
  std::vector<std::string> texts = {
      kValid,
      large,
      Edit("\"root\": \"m\"", "\"root\" \"m\""),   // a syntax error
      Edit("\"root\": \"m\"", "\"root\": 7"),        // a schema error
      Edit("\"dp\": 2", "\"dp\": -2"),                 // an error the walk finds late
  };
  const std::string last = "\"p2999\": {";
  texts.push_back(large);  // a schema error in the last batch
  texts.back().replace(texts.back().find(last), last.size(), "\"p2999\": 7, \"q\": {");
  EXPECT_EQ(*Invalid(texts.back()).pointer, "/parameters/p2999");
  for (const std::string& text : texts) {
    for (const std::string& bad : {std::string(1, '\0'), std::string("\xff")}) {
      for (const size_t at : {text.size() / 2, text.size()}) {
        std::string edited = text;
        edited.insert(at, bad);
        const std::string expected = Invalid(edited).message;  // one thread: checked first
        ASSERT_NE(expected.find(bad[0] == '\0' ? "NUL byte" : "invalid UTF-8"), std::string::npos) << expected;
        for (int threads : {2, 4}) {
          const std::optional<Diagnostic> error =
              WithThreads(threads, [&] { return ParseDocument(edited, Limits{}).error; });
          ASSERT_TRUE(error.has_value());
          EXPECT_EQ(error->message, expected) << threads << " threads, at " << at;
        }
      }
    }
  }
}

TEST(ParseTest, WrongTypesNameTheirPointer) {
  Diagnostic d = Invalid(Edit("\"shape\": [8, 4]", "\"shape\": \"8x4\""));
  EXPECT_EQ(*d.pointer, "/parameters/w/shape");
  EXPECT_NE(d.message.find("expected an array, got a string"), std::string::npos) << d.message;
  EXPECT_EQ(*Invalid(Edit("\"forward\": [\"input\"", "\"forward\": [7")).pointer, "/modules/m/forward/0");
  EXPECT_EQ(*Invalid(Edit("\"type\": \"Linear\"", "\"type\": null")).pointer, "/modules/m/type");
}

TEST(ParseTest, UnknownKeysAreRefusedEverywhere) {
  EXPECT_EQ(*Invalid(Edit("\"root\": \"m\"", "\"root\": \"m\", \"rot\": 1")).pointer, "/rot");
  EXPECT_EQ(*Invalid(Edit("\"type\": \"Linear\"", "\"typ\": \"Linear\"")).pointer, "/modules/m/typ");
  EXPECT_EQ(*Invalid(Edit("\"in_src\": {}", "\"in_sr\": {}")).pointer, "/providers/sharding//in_sr");
}

TEST(ParseTest, MissingRequiredKeysAreRefused) {
  Diagnostic d = Invalid(Edit("\"root\": \"m\",", ""));
  EXPECT_NE(d.message.find("missing required key 'root'"), std::string::npos) << d.message;
  EXPECT_NE(Invalid(Edit("\"schema\": \"shardplan.v1\"", "\"schema\": \"shardplan.v2\"")).message, "");
}

TEST(ParseTest, UnknownIdsAreRefused) {
  EXPECT_EQ(*Invalid(Edit("\"weight\": \"w\"", "\"weight\": \"nope\"")).pointer, "/modules/m/params/weight");
  EXPECT_EQ(*Invalid(Edit("\"root\": \"m\"", "\"root\": \"nope\"")).pointer, "/root");
  Diagnostic d = Invalid(Edit("\"params\": {\"weight\": \"w\"}", "\"children\": {\"c\": \"nope\"}"));
  EXPECT_EQ(*d.pointer, "/modules/m/children/c");
}

// References are resolved in parallel over thousands of modules: the first
// module in document order with an unknown id is reported, its children
// before its params, wherever the others are.
TEST(ParseTest, TheFirstUnknownReferenceInDocumentOrderIsReported) {
  auto doc = [](const std::vector<std::pair<int, std::string>>& broken) {
    std::string modules = R"J("m": {"children": {)J";
    for (int i = 0; i < 20000; ++i) absl::StrAppend(&modules, i ? ", " : "", "\"c", i, "\": \"m", i, "\"");
    modules += "}}";
    for (int i = 0; i < 20000; ++i) {
      std::string body = R"J("params": {"weight": "w"})J";
      for (const auto& [at, what] : broken) {
        if (at == i) body = what;
      }
      absl::StrAppend(&modules, ", \"m", i, "\": {", body, "}");
    }
    return absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"w": {}}, "root": "m",
      "modules": {)J", modules, "}}");
  };
  const std::string bad_param = R"J("params": {"weight": "nope"})J";
  const std::string bad_child = R"J("children": {"x": "gone"})J";
  const std::string both = R"J("children": {"x": "gone"}, "params": {"weight": "nope"})J";
  EXPECT_EQ(*Invalid(doc({{17000, bad_param}, {15000, bad_child}})).pointer, "/modules/m15000/children/x");
  EXPECT_EQ(*Invalid(doc({{9000, bad_param}, {12000, bad_child}, {19999, bad_child}})).pointer,
            "/modules/m9000/params/weight");
  const Diagnostic d = Invalid(doc({{4097, both}, {100, bad_param}}));
  EXPECT_EQ(*d.pointer, "/modules/m100/params/weight");
  EXPECT_EQ(d.message, "unknown parameter id 'nope' (at /modules/m100/params/weight)");
  EXPECT_EQ(*Invalid(doc({{4097, both}})).pointer, "/modules/m4097/children/x");
  EXPECT_EQ(Invalid(doc({})).message, "");
}

TEST(ParseTest, CyclesAreRefusedEvenWhenUnreachable) {
  Diagnostic d = Invalid(Edit("\"m\": {", "\"x\": {\"children\": {\"y\": \"y\"}}, \"y\": {\"children\": {\"x\": \"x\"}}, \"m\": {"));
  EXPECT_NE(d.message.find("cycle in children"), std::string::npos) << d.message;
  EXPECT_NE(Invalid(Edit("\"params\": {\"weight\": \"w\"}", "\"children\": {\"self\": \"m\"}")).message, "");
}

TEST(ParseTest, DuplicateKeysAreRefusedAtAnyDepth) {
  EXPECT_EQ(*Invalid(Edit("\"dp\": 2,", "\"dp\": 2, \"dp\": 2,")).pointer, "/mesh/dp");
  EXPECT_EQ(*Invalid(Edit("\"m\": {", "\"m\": {}, \"m\": {")).pointer, "/modules/m");
  EXPECT_NE(Invalid(Edit("\"in_dst\": {}", "\"in_dst\": {}, \"inner_wrapper\": {\"a\": 1, \"a\": 2}")).message, "");
  EXPECT_EQ(*Invalid(Edit("\"weight\": {\"tp\": \"S(0)\"}", "\"weight\": {\"tp\": \"S(0)\", \"tp\": \"R\"}")).pointer,
            "/providers/sharding//params/weight/tp");
}

// A streamed map (parameters, modules, providers.sharding, plan.modules)
// or the object holding it, given twice, is the duplicate key: no finding
// inside the second one comes first, whose JSON pointer would name the first
// one's value (found by fuzz/regressions/plan_fuzz/duplicate-plan.json).
TEST(ParseTest, RepeatedStreamedMapsAreDuplicateKeysBeforeAnythingInside) {
  const std::string bad_layout = R"J({"params": {}, "in_src": {}, "in_dst": {}, "oud_dst": {}})J";
  const std::string bad_module = R"J({"typo": 1})J";
  // Each added after the document's last member.
  const struct {
    std::string members, pointer;
  } cases[] = {
      {absl::StrCat(R"J("plan": {"tp": 2}, "plan": {"modules": {"m": )J", bad_layout, "}}"), "/plan"},
      {absl::StrCat(R"J("plan": {"modules": {}, "modules": {"m": )J", bad_layout, "}}"), "/plan/modules"},
      {absl::StrCat(R"J("providers": {"sharding": {"x": )J", bad_layout, "}}"), "/providers"},
      {absl::StrCat(R"J("modules": {"n": )J", bad_module, "}"), "/modules"},
      {absl::StrCat(R"J("parameters": {"v": )J", bad_module, "}"), "/parameters"},
  };
  for (const auto& c : cases) {
    const Diagnostic d = Invalid(Edit("\"in_dst\": {}}}}\n}", absl::StrCat("\"in_dst\": {}}}}, ", c.members, "\n}")));
    ASSERT_TRUE(d.pointer.has_value()) << c.members;
    EXPECT_EQ(*d.pointer, c.pointer) << d.message;
    EXPECT_TRUE(absl::StartsWith(d.message, "duplicate key")) << d.message;
  }
}

// Provider and plan maps check their FQNs for duplicates by name id: a
// repeat far from the first spelling (many names, interned elsewhere
// first or not) is found, and one map's names do not count in the other.
TEST(ParseTest, RepeatedFqnsInProviderAndPlanMapsAreRefused) {
  const std::string layout = R"J({"params": {}, "in_src": {}, "in_dst": {}})J";
  auto map = [&](int n, int repeat) {
    std::string entries;
    for (int i = 0; i < n; ++i) absl::StrAppend(&entries, "\"blocks.", i, "\": ", layout, ", ");
    if (repeat >= 0) absl::StrAppend(&entries, "\"blocks.", repeat, "\": ", layout, ", ");
    return absl::StrCat("{", entries, "\"\": ", layout, "}");
  };
  auto doc = [&](const std::string& providers, const std::string& plan) {
    return Edit(R"J("providers": {"sharding": {"": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}})J",
                absl::StrCat("\"providers\": {\"sharding\": ", providers, "}, \"plan\": {\"modules\": ", plan, "}"));
  };
  EXPECT_EQ(Invalid(doc(map(300, -1), map(300, -1))).message, "");
  for (int repeat : {0, 63, 64, 299}) {
    Diagnostic d = Invalid(doc(map(300, repeat), map(10, -1)));
    EXPECT_EQ(d.message, absl::StrCat("duplicate key 'blocks.", repeat, "' (at /providers/sharding/blocks.", repeat, ")"));
    d = Invalid(doc(map(10, -1), map(300, repeat)));
    EXPECT_EQ(*d.pointer, absl::StrCat("/plan/modules/blocks.", repeat)) << d.message;
  }
}

TEST(ParseTest, HugeAndNonIntegerNumbersAreRefused) {
  EXPECT_NE(Invalid(Edit("\"tp\": 4", "\"tp\": 18446744073709551616")).message, "");
  EXPECT_NE(Invalid(Edit("\"tp\": 4", "\"tp\": 4.0")).message, "");
  EXPECT_NE(Invalid(Edit("\"tp\": 4", "\"tp\": 1e999")).message, "");
  EXPECT_EQ(*Invalid(Edit("[8, 4]", "[8, -4]")).pointer, "/parameters/w/shape/1");
  EXPECT_EQ(*Invalid(Edit("\"tp\": 4", "\"tp\": 0")).pointer, "/mesh/tp");
}

TEST(ParseTest, BadPlacementsAndNamesAreRefused) {
  EXPECT_NE(Invalid(Edit("\"S(0)\"", "\"Shard(0)\"")).message.find("bad placement 'Shard(0)'"), std::string::npos);
  EXPECT_NE(Invalid(Edit("\"weight\": \"w\"", "\"we.ight\": \"w\"")).message.find("must not contain '.'"),
            std::string::npos);
  EXPECT_NE(Invalid(Edit("\"bfloat16\"", "\"bf16\"")).message.find("unknown dtype"), std::string::npos);
}

TEST(ParseTest, PlanLayoutsNeedParams) {
  std::string text = Edit("\"providers\"", "\"plan\": {\"modules\": {\"\": {\"params\": null}}}, \"providers\"");
  EXPECT_EQ(*Invalid(text).pointer, "/plan/modules//params");
}

// A layout spelled exactly as the previous one is not parsed again: it
// must still be its own entry (origin, pointer), and a plan layout must
// still need params when a provider spelled the same text.
TEST(ParseTest, RepeatedLayoutTextsKeepTheirOwnPlaceAndRules) {
  const std::string layout = R"J({"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}})J";
  std::string text = Edit(R"J("sharding": {"": )J", absl::StrCat(R"J("sharding": {"a": )J", layout, R"J(, "b": )J",
                                                               layout, R"J(, "c": {"params": null}, "": )J"));
  ParseResult parsed = ParseDocument(text, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  ASSERT_EQ(doc.model_providers.size(), 4u);
  EXPECT_EQ(doc.PointerOf(doc.model_providers[1].layout.origin), "/providers/sharding/b");
  EXPECT_EQ(&*doc.model_providers[0].layout.params(), &*doc.model_providers[1].layout.params());
  EXPECT_EQ(doc.Name((*doc.model_providers[1].layout.params())[0].name), "weight");
  // A plan after the providers reads the text of the last provider, with
  // the plan's rule.
  std::string both = Edit("\"in_dst\": {}}}}", R"J("in_dst": {}}, "z": {"params": null}}})J");
  both.insert(both.rfind('}'), R"J(, "plan": {"modules": {"x": {"params": null}}})J");
  EXPECT_EQ(Invalid(both.substr(0, both.find(", \"plan\"")) + "}").message, "");
  EXPECT_EQ(*Invalid(both).pointer, "/plan/modules/x/params");
}

// The scanner compares a layout with the member before it instead of reading
// it again. Over 600 providers (several streamed batches) in runs of repeats,
// spelled with look-alikes (a layout that starts like the previous one, a
// different spacing), every provider gets the layout its own text spells.
TEST(ParseTest, RepeatedLayoutsAcrossBatchesParseAsWritten) {
  const std::vector<std::string> layouts = {
      R"J({"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}})J",
      R"J({"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}, "out_names": ["y"]})J",
      R"J({"params": {"weight": {"tp": "S(1)"}}, "in_src": {}, "in_dst": {}})J",
      R"J({"params": {"weight":{"tp": "S(1)"}}, "in_src": {}, "in_dst": {}})J",
      R"J({"params": null})J"};
  std::string providers;
  std::vector<size_t> spelled;
  for (size_t i = 0; i < 600; ++i) {
    const size_t k = (i / 7 + i / 50) % layouts.size();  // runs of 1 to 7 repeats
    absl::StrAppend(&providers, i ? (i % 3 ? ", " : ",\n ") : "", "\"p", i, "\": ", layouts[k]);
    spelled.push_back(k);
  }
  const std::string text = Edit(R"J("sharding": {"": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}})J",
                                absl::StrCat(R"J("sharding": {)J", providers, "}"));
  ParseResult parsed = ParseDocument(text, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  ASSERT_EQ(doc.model_providers.size(), 600u);
  for (size_t i = 0; i < 600; ++i) {
    const Layout& layout = doc.model_providers[i].layout;
    EXPECT_EQ(doc.Name(doc.model_providers[i].fqn), absl::StrCat("p", i));
    EXPECT_EQ(doc.PointerOf(layout.origin), absl::StrCat("/providers/sharding/p", i));
    const size_t k = spelled[i];
    ASSERT_EQ(bool(layout.params()), k != 4) << i;
    EXPECT_EQ(layout.out_names().has_value(), k == 1) << i;
    if (k == 4) continue;
    const Placement& p = (*layout.params())[0].placements[0].placement;
    EXPECT_EQ(p.dim, k < 2 ? 0 : 1) << i;
  }
}

// A syntax error right after a repeated layout is reported where it is, as
// after a layout read in full (the same text with the previous layout
// spelled differently, at the same length).
TEST(ParseTest, ErrorAfterARepeatedLayoutIsWhereItIs) {
  const std::string layout = R"J({"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}})J";
  const std::string other = R"J({"params": {"weight": {"tp": "S(0)"}}, "in_src": {},"in_dst":  {}})J";
  ASSERT_EQ(layout.size(), other.size());
  for (const char* after : {"]", " x", "{}", ", \"q\" {}"}) {
    auto with = [&](const std::string& first) {
      return Invalid(Edit(R"J("sharding": {"": )J",
                          absl::StrCat(R"J("sharding": {"a": )J", first, R"J(, "b": )J", layout, after, R"J(, "": )J")));
    };
    const Diagnostic repeated = with(layout), read = with(other);
    EXPECT_NE(repeated.message, "") << after;
    EXPECT_EQ(repeated.message, read.message) << after;
    EXPECT_EQ(repeated.pointer, read.pointer) << after;
  }
}

// A parallel spec spelled like the previous one is that spec: modules in a
// row with specs that differ from the one before in one place each (an
// axis, an axis count, a kind, key order, an escape that decodes to the
// same name) keep what they spell, each with its own origin; a spec whose
// fault is only its difference from the previous one is still refused.
TEST(ParseTest, RepeatedParallelSpecsParseAsWritten) {
  const std::vector<std::pair<std::string, std::string>> specs = {
      {R"J({"binding_kind": "tp", "axes": ["dp", "tp"]})J", "tp:dp,tp"},
      {R"J({"binding_kind": "tp", "axes": ["dp", "tp"]})J", "tp:dp,tp"},
      {R"J({"binding_kind": "tp", "axes": ["dp"]})J", "tp:dp"},
      {R"J({"binding_kind": "tp", "axes": ["dp", "ep"]})J", "tp:dp,ep"},
      {R"J({"binding_kind": "ep", "axes": ["dp", "ep"]})J", "ep:dp,ep"},
      {R"J({"axes": ["dp", "ep"], "binding_kind": "ep"})J", "ep:dp,ep"},
      {R"J({"binding_kind": "\u0065p", "axes": ["dp", "e\u0070"]})J", "ep:dp,ep"},
      {R"J({"binding_kind": "ep"})J", "ep:"},
      {R"J({"binding_kind": "ep", "axes": []})J", "ep:"}};
  std::string modules = R"J("m": {"children": {)J";
  for (size_t i = 0; i < specs.size(); ++i) absl::StrAppend(&modules, i ? ", " : "", "\"c", i, "\": \"s", i, "\"");
  modules += "}}";
  for (size_t i = 0; i < specs.size(); ++i) absl::StrAppend(&modules, ", \"s", i, "\": {\"parallel\": ", specs[i].first, "}");
  const std::string text = Edit(R"J("m": {"type": "Linear", "forward": ["input", "*args", "**kwargs"], "params": {"weight": "w"}})J",
                                modules);
  ParseResult parsed = ParseDocument(text, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  for (size_t i = 0; i < specs.size(); ++i) {
    const Module& m = doc.modules[i + 1];
    ASSERT_EQ(doc.Name(m.id), absl::StrCat("s", i));
    ASSERT_TRUE(m.parallel.has_value()) << i;
    std::string spelled = absl::StrCat(doc.Name(m.parallel->binding_kind), ":");
    for (size_t a = 0; a < m.parallel->axes.size(); ++a) absl::StrAppend(&spelled, a ? "," : "", doc.Name(m.parallel->axes[a]));
    EXPECT_EQ(spelled, specs[i].second) << i;
    EXPECT_EQ(doc.PointerOf(m.parallel->origin), absl::StrCat("/modules/s", i, "/parallel"));
  }
  // After a valid spec, one that differs only by a bad value is refused.
  for (const char* bad : {R"J({"binding_kind": "", "axes": ["dp", "tp"]})J", R"J({"binding_kind": "tp", "axes": ["dp", 1]})J",
                          R"J({"binding_kind": "tp", "axes": ["dp", "tp"], "x": 1})J"}) {
    const std::string twice = Edit(R"J("m": {"type": "Linear", "forward": ["input", "*args", "**kwargs"], "params": {"weight": "w"}})J",
                                   absl::StrCat(R"J("m": {"children": {"a": "s0", "b": "s1"}}, "s0": {"parallel": )J",
                                                specs[0].first, R"J(}, "s1": {"parallel": )J", bad, "}"));
    EXPECT_EQ(Invalid(twice).pointer.value_or("").rfind("/modules/s1/parallel", 0), 0u) << bad;
  }
}

TEST(ParseTest, NullIsAcceptedOnlyWhereTheSpecAllowsIt) {
  EXPECT_EQ(Invalid(Edit("\"in_src\": {}", "\"in_src\": null")).message, "");
  EXPECT_EQ(Invalid(Edit("\"type\": \"Linear\"", "\"type\": \"Linear\", \"parallel\": null")).message, "");
  EXPECT_NE(Invalid(Edit("\"dtype\": \"bfloat16\"", "\"dtype\": null")).message, "");
  EXPECT_NE(Invalid(Edit("\"providers\": {", "\"plan\": null, \"providers\": {")).message, "");
}

TEST(ParseTest, NestingDepthIsLimited) {
  std::string deep = Edit("\"in_dst\": {}", "\"in_dst\": {}, \"region_dispatch\": " + std::string(100000, '[') +
                                                std::string(100000, ']'));
  Diagnostic d = Invalid(deep);
  EXPECT_NE(d.message.find("deeper than 64 levels"), std::string::npos) << d.message;
}

// A chain of `levels` modules, each using the next one twice: 2^levels paths.
std::string PathBomb(int levels) {
  std::string modules;
  for (int i = 0; i < levels; ++i) {
    modules += "\"m" + std::to_string(i) + "\": {\"children\": {\"a\": \"m" + std::to_string(i + 1) +
               "\", \"b\": \"m" + std::to_string(i + 1) + "\"}}, ";
  }
  modules += "\"m" + std::to_string(levels) + "\": {}";
  return R"J({"schema": "shardplan.v1", "mesh": {}, "parameters": {}, "root": "m0", "modules": {)J" + modules + "}}";
}

TEST(ParseTest, PathExplosionThroughSharedModulesIsRefused) {
  EXPECT_EQ(Invalid(PathBomb(10)).message, "");  // 2047 paths
  Diagnostic d = Invalid(PathBomb(200));         // 2^201 - 1 paths, saturating
  EXPECT_NE(d.message.find("more than 10000000 module paths"), std::string::npos) << d.message;
  EXPECT_EQ(*d.pointer, "/modules");
  Limits small;
  small.max_paths = 2000;
  EXPECT_NE(Invalid(PathBomb(10), small).message, "");
}

// `count` modules, one per line after the first two lines, with `edits`
// applied to the module of each given index: the large maps are read in
// batches that overlap with parsing, and errors must still come in
// document order.
std::string ManyModules(int count, const std::vector<std::pair<int, std::string>>& edits) {
  std::string text = "{\"schema\": \"shardplan.v1\", \"mesh\": {\"tp\": 2}, \"parameters\": {}, \"root\": \"m0\",\n"
                     "\"modules\": {";
  for (int i = 0; i < count; ++i) {
    std::string module = "\"m" + std::to_string(i) + "\": {\"type\": \"Linear\"}";
    for (const auto& [at, replacement] : edits) {
      if (at == i) module = replacement;
    }
    text += (i ? ",\n" : "\n") + module;
  }
  return text + "}}";
}

TEST(ParseTest, ErrorsInLargeMapsComeInDocumentOrder) {
  EXPECT_EQ(Invalid(ManyModules(5000, {})).message, "");
  const std::string syntax = "\"m3000\" {\"type\": \"Linear\"}";  // no colon: line 3003, column 9
  const std::string schema = "\"m%\": {\"typo\": 1}";
  auto schema_at = [&](int i) {
    std::string edit = schema;
    edit.replace(edit.find('%'), 1, std::to_string(i));
    return std::make_pair(i, edit);
  };
  Diagnostic d = Invalid(ManyModules(5000, {{3000, syntax}}));
  EXPECT_EQ(d.message, "malformed JSON at line 3003, column 9: Missing a colon after a name of object member.");
  // A schema error before the syntax error wins, however far apart.
  for (int i : {10, 2990, 2999}) {
    d = Invalid(ManyModules(5000, {schema_at(i), {3000, syntax}}));
    EXPECT_EQ(*d.pointer, "/modules/m" + std::to_string(i) + "/typo") << d.message;
  }
  // After it, the syntax error wins.
  for (int i : {3001, 3300, 4999}) {
    d = Invalid(ManyModules(5000, {{3000, syntax}, schema_at(i)}));
    EXPECT_NE(d.message.find("line 3003, column 9"), std::string::npos) << d.message;
  }
  // A missing comma after a member: the member before it is parsed first.
  d = Invalid(ManyModules(5000, {{1000, "\"m1000\": {\"typo\": 1} \"m1000b\": {}"}}));
  EXPECT_EQ(*d.pointer, "/modules/m1000/typo");
  d = Invalid(ManyModules(5000, {{1000, "\"m1000\": {} \"m1000b\": {}"}}));
  EXPECT_EQ(d.message, "malformed JSON at line 1003, column 13: Missing a comma or '}' after an object member.");
}

// Layouts and parallel specs keep where they were declared; their pointers
// are spelled on demand, escaped.
TEST(ParseTest, LayoutsAndParallelSpecsSpellTheirPointers) {
  const std::string text = R"J({
    "schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "r~1",
    "modules": {
      "r~1": {"children": {"f": "f/x"}, "parallel": {"binding_kind": "tp"}},
      "f/x": {"parallel": {"binding_kind": "tp"}, "family": {"sharding": {"params": {}},
              "cached": {"sharding": {"params": {}}, "parallel": {"binding_kind": "tp"}}}}
    },
    "providers": {"sharding": {"a/b": {"params": {}}},
                  "native": [{"match": ["f"], "sharding": {}}, {"match": ["f"], "sharding": {},
                              "parallel": {"binding_kind": "ep"}}]},
    "plan": {"modules": {"": {"params": {}}, "f~": {"params": {}}}}
  })J";
  ParseResult parsed = ParseDocument(text, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  EXPECT_EQ(doc.PointerOf(doc.model_providers[0].layout.origin), "/providers/sharding/a~1b");
  EXPECT_EQ(doc.PointerOf(doc.native[1].sharding.origin), "/providers/native/1/sharding");
  EXPECT_EQ(doc.PointerOf(doc.native[1].parallel->origin), "/providers/native/1/parallel");
  EXPECT_EQ(doc.PointerOf((*doc.plan)[1].layout.origin), "/plan/modules/f~0");
  const Module& root = doc.modules[0];
  const Module& f = doc.modules[1];
  EXPECT_EQ(doc.PointerOf(root.parallel->origin), "/modules/r~01/parallel");
  EXPECT_EQ(doc.PointerOf(f.family->sharding->origin), "/modules/f~1x/family/sharding");
  EXPECT_EQ(doc.PointerOf(f.family->cached->sharding.origin), "/modules/f~1x/family/cached/sharding");
  EXPECT_EQ(doc.PointerOf(f.family->cached->parallel->origin), "/modules/f~1x/family/cached/parallel");
}

TEST(ParseTest, ModulesWithAFamilyAreListedInIdOrder) {
  const std::string text = R"J({
    "schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "r",
    "modules": {
      "r": {"children": {"d": "d", "b": "b", "c": "c"}},
      "b": {"family": {"sharding": {"params": {}}}},
      "c": {},
      "d": {"family": {"parallel": true}}
    }
  })J";
  ParseResult parsed = ParseDocument(text, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  EXPECT_EQ(parsed.document->family_modules, (std::vector<ModuleId>{1, 3}));
  EXPECT_EQ(parsed.document->Clone()->family_modules, (std::vector<ModuleId>{1, 3}));
}

TEST(ParseTest, JsonPointerTokensAreEscaped) {
  EXPECT_EQ(JsonPointerToken("a/b~c"), "a~1b~0c");
  EXPECT_EQ(*Invalid(Edit("\"tp\": 4", "\"t/p\": 0")).pointer, "/mesh/t~1p");
}

TEST(ParseTest, TemplatesAndOverridesParse) {
  const std::string json = Edit(R"J("providers")J", R"J("templates": [
      {"axis": "tp", "prefix": "model", "rules": {"layers.*.q_proj": "colwise", "lm_head.weight": "rowwise"}},
      {"axis": "dp", "rules": {}}],
    "overrides": {"": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}}},
    "providers")J");
  ParseResult parsed = ParseDocument(json, Limits{});
  ASSERT_FALSE(parsed.error.has_value()) << parsed.error->message;
  const Document& doc = *parsed.document;
  ASSERT_EQ(doc.templates.size(), 2u);
  EXPECT_EQ(doc.Name(doc.templates[0].axis), "tp");
  EXPECT_EQ(doc.templates[0].prefix, "model");
  ASSERT_EQ(doc.templates[0].rules.size(), 2u);
  EXPECT_EQ(doc.templates[0].rules[1].pattern, "lm_head.weight");
  EXPECT_EQ(doc.templates[0].rules[1].style, Style::kRowwise);
  EXPECT_EQ(doc.templates[0].rules[0].pointer, "/templates/0/rules/layers.*.q_proj");
  EXPECT_EQ(doc.templates[1].prefix, "");
  ASSERT_EQ(doc.overrides.size(), 1u);
  EXPECT_EQ(doc.PointerOf(doc.overrides[0].layout.origin), "/overrides/");
}

TEST(ParseTest, TemplateMistakesAreInvalidDocuments) {
  auto with = [](std::string_view templates) {
    return Invalid(Edit(R"J("providers")J", std::string(templates) + R"J(, "providers")J"));
  };
  Diagnostic d = with(R"J("templates": [{"axis": "pp", "rules": {}}])J");
  EXPECT_EQ(d.message, "template axis 'pp' is not a mesh axis (at /templates/0/axis)");
  d = with(R"J("templates": [{"axis": "tp", "rules": {"a.*": "Colwise"}}])J");
  EXPECT_EQ(d.pointer, "/templates/0/rules/a.*");
  EXPECT_NE(d.message.find("unknown template style 'Colwise'"), std::string::npos) << d.message;
  d = with(R"J("templates": [{"axis": "tp", "rules": {"": "colwise"}}])J");
  EXPECT_NE(d.message.find("must not be empty"), std::string::npos) << d.message;
  d = with(R"J("templates": [{"axis": "tp"}])J");
  EXPECT_NE(d.message.find("missing required key 'rules'"), std::string::npos) << d.message;
  // No params to point at: the pointer names the layout (the root's, "").
  d = with(R"J("overrides": {"": {"in_src": {}, "in_dst": {}}})J");
  EXPECT_EQ(d.pointer, "/overrides/");
  d = with(R"J("plan": {"modules": {}}, "templates": [])J");
  EXPECT_NE(d.message.find("not both"), std::string::npos) << d.message;
  EXPECT_EQ(d.pointer, "/templates");
}

}  // namespace
}  // namespace shardplan

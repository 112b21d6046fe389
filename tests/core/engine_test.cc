// End-to-end behaviour of Check(): claims, aliases, all-errors reporting and
// the result's JSON.
#include "core/engine.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/diagnostics/sink.h"
#include "core/model/parse.h"
#include "core/outcome.h"
#include "core/planning/styles.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// The owned names of a passing result, sorted, as its JSON lists them.
std::vector<std::string> OwnedNames(const Result& r) {
  std::vector<std::string> names;
  for (const ModuleTree::ParamPath& slot : OwnedSlots(*r.outcome)) names.push_back(r.outcome->tree->FullName(slot));
  std::sort(names.begin(), names.end());
  return names;
}

// embed and head share parameter "e" (tied weights); norm has "n".
std::string Doc(std::string_view providers, std::string_view extra = "") {
  return std::string(R"J({
  "schema": "shardplan.v1", "mesh": {"tp": 2},
  "parameters": {"e": {"shape": [16, 4]}, "n": {"shape": [4]}},
  "root": "model",
  "modules": {
    "model": {"forward": ["input_ids"], "children": {"embed": "emb", "norm": "norm", "head": "head"}},
    "emb": {"type": "Embedding", "forward": ["input"], "params": {"weight": "e"}},
    "norm": {"forward": ["x"], "params": {"weight": "n"}},
    "head": {"type": "Linear", "forward": ["input"], "params": {"weight": "e"}}
  },
  "providers": )J") + std::string(providers) + std::string(extra) + "}";
}

Result CheckDoc(const std::string& json) {
  absl::StatusOr<Result> r = Check(json, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

std::vector<std::string> Codes(const Result& r) {
  std::vector<std::string> out;
  for (const Diagnostic& d : r.diagnostics) out.push_back(d.code);
  return out;
}

constexpr char kTiedSame[] = R"J({"sharding": {
    "embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}},
    "head": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}})J";

TEST(EngineTest, TiedParameterWithEqualPlacementBecomesAnAlias) {
  Result r = CheckDoc(Doc(kTiedSame));
  ASSERT_TRUE(r.ok) << r.diagnostics[0].message;
  const Owned& owned = *r.outcome->owned;
  ASSERT_EQ(owned.aliases.size(), 1u);
  EXPECT_EQ(owned.aliases[0].first, "embed.weight");
  EXPECT_EQ(owned.aliases[0].second, "head.weight");
  EXPECT_EQ(OwnedNames(r), (std::vector<std::string>{"embed.weight", "head.weight"}));
  // The later claimant's declaration is dropped; the first stays canonical.
  const std::vector<Owner>& owners = r.outcome->owners;
  const Declarations& declared = r.outcome->declared;
  ASSERT_EQ(owners.size(), 2u);
  EXPECT_EQ(r.outcome->tree->fqn(owners[1].path), "head");
  using Outcome = Declarations::Outcome;
  EXPECT_EQ(std::vector<Outcome>(declared.OutcomesOf(owners[1]).begin(), declared.OutcomesOf(owners[1]).end()),
            std::vector<Outcome>{Outcome::kDropped});
  EXPECT_TRUE(declared.Required(owners[1]).empty());
  EXPECT_EQ(declared.Required(owners[0]).size(), 1u);
}

// One owner naming a tied parameter twice: the second name is dropped, and
// the owner's required parameters come out sorted by id, each once.
TEST(EngineTest, AnOwnersDeclarationsRecordWhatClaimsMadeOfEach) {
  Result r = CheckDoc(Doc(R"J({"sharding": {"": {"params": {"norm.weight": {"tp": "R"},
      "embed.weight": {"tp": "S(0)"}, "head.weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}})J"));
  ASSERT_TRUE(r.ok) << r.diagnostics[0].message;
  ASSERT_TRUE(r.outcome->owned.has_value());
  const Declarations& declared = r.outcome->declared;
  ASSERT_EQ(r.outcome->owners.size(), 1u);
  const Owner& root = r.outcome->owners[0];
  using Outcome = Declarations::Outcome;
  const absl::Span<const ParamId> params = declared.ParamsOf(root);
  const absl::Span<const Outcome> outcomes = declared.OutcomesOf(root);
  EXPECT_EQ(std::vector<ParamId>(params.begin(), params.end()), (std::vector<ParamId>{1, 0, 0}));
  EXPECT_EQ(std::vector<Outcome>(outcomes.begin(), outcomes.end()),
            (std::vector<Outcome>{Outcome::kRequired, Outcome::kRequired, Outcome::kDropped}));
  EXPECT_EQ(declared.Required(root), (SmallVector<ParamId>{0, 1}));
  const std::string json = ResultToJson(r);
  EXPECT_NE(json.find(R"J("specs":{"":{"params":{"norm.weight":{"tp":"R"},"embed.weight":{"tp":"S(0)"}},)J"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"J("required":{"":["e","n"]})J"), std::string::npos) << json;
}

TEST(EngineTest, TiedParameterWithConflictingPlacementIsSharedConflict) {
  Result r = CheckDoc(Doc(R"J({"sharding": {
    "embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}},
    "head": {"params": {"weight": {"tp": "S(1)"}}, "in_src": {}, "in_dst": {}}}})J"));
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  const Diagnostic& d = r.diagnostics[0];
  EXPECT_EQ(d.code, "shared-conflict");
  EXPECT_EQ(d.message, "shared parameter 'head.weight' has conflicting layouts");
  EXPECT_EQ(*d.fqn, "head");
  EXPECT_EQ(*d.parameter, "head.weight");
  EXPECT_EQ(*d.pointer, "/providers/sharding/head/params/weight");
}

// A native request's parallel spec is the owner's, not the module's own:
// its axes are checked even where the module's own spec is on the mesh.
TEST(EngineTest, ANativeRequestsParallelSpecIsCheckedNotTheModules) {
  Result r = CheckDoc(R"J({
  "schema": "shardplan.v1", "mesh": {"tp": 2},
  "parameters": {"w": {"shape": [8, 8]}},
  "root": "model",
  "modules": {
    "model": {"children": {"proj": "linear"}},
    "linear": {"type": "Linear", "forward": ["input"], "params": {"weight": "w"},
               "parallel": {"binding_kind": "tp", "axes": ["tp"]}}
  },
  "providers": {"native": [{"match": ["proj"],
                            "sharding": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}},
                            "parallel": {"binding_kind": "tp", "axes": ["tp", "sp"]}}]}})J");
  ASSERT_EQ(Codes(r), std::vector<std::string>{"parallel-unknown-axis"});
  EXPECT_EQ(*r.diagnostics[0].pointer, "/providers/native/0/parallel/axes/1");
}

TEST(EngineTest, RootLevelOwnerHasEmptyFqnAndNamesParametersWithoutPrefix) {
  Result r = CheckDoc(Doc(R"J({"sharding": {"": {"params": {"embed.weight": {"tp": "R"}, "norm.weight": {}},
                                           "in_src": {"input_ids": {}}, "in_dst": {"input_ids": {}}}}})J"));
  ASSERT_TRUE(r.ok) << r.diagnostics[0].message;
  EXPECT_EQ(r.outcome->tree->fqn(r.outcome->owners[0].path), "");
  EXPECT_EQ(OwnedNames(r), (std::vector<std::string>{"embed.weight", "head.weight", "norm.weight"}));
  ASSERT_EQ(r.outcome->owned->aliases.size(), 1u);
  EXPECT_EQ(r.outcome->owned->aliases[0].second, "head.weight");
}

TEST(EngineTest, RootOwnerOmittingAParameterListsItsLocalNames) {
  Result r = CheckDoc(Doc(R"J({"sharding": {"": {"params": {"norm.weight": {}}, "in_src": {}, "in_dst": {}}}})J"));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.diagnostics[0].message, "module-owned layout '' omits parameters ['embed.weight', 'head.weight']");
}

TEST(EngineTest, EveryIndependentProblemIsReportedInEvaluationOrder) {
  Result r = CheckDoc(Doc(R"J({"sharding": {
    "nowhere": {"params": {}, "in_src": {}, "in_dst": {}},
    "embed": {"params": {"weight": {"pp": "S(0)"}}, "in_src": {}, "in_dst": {}},
    "norm": {"params": {"weight": {"tp": "P"}}, "in_src": {"y": {}}, "in_dst": {"y": {}}}}})J"));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"unknown-module", "unknown-axis", "unknown-forward-input",
                                                "partial-parameter"}));
  EXPECT_EQ(r.diagnostics[0].message, "no module at 'nowhere'");
}

TEST(EngineTest, OmissionsAreNotReportedWhenAnOwnerFailedToBeAdded) {
  // The native request was meant to own `norm` but its pattern matches
  // nothing: the root owner's omission of norm.weight would be a cascade.
  Result r = CheckDoc(Doc(R"J({
    "sharding": {"": {"params": {"embed.weight": {}}, "in_src": {}, "in_dst": {}}},
    "native": [{"match": ["nrom"], "sharding": {"params": {"weight": {}}, "in_src": {}, "in_dst": {}}}]})J"));
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"native-no-match"}));
}

TEST(EngineTest, OmissionsAreStillReportedAfterErrorsThatDropNoOwner) {
  // unknown-output keeps its owner, so norm's omission is independent.
  Result r = CheckDoc(Doc(R"J({"sharding": {
    "embed": {"params": {"weight": {}}, "in_src": {}, "in_dst": {}, "out_src": {"y": {}}, "out_names": ["out"]},
    "norm": {"params": {}, "in_src": {}, "in_dst": {}}}})J"));
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"unknown-output", "omitted-parameters"}));
}

// Omissions of owners small and large: block `block` has k Linear children
// l<i> (weight p<i>); l0's bias is p1, tied to l1's weight. The owner
// declares every weight but the last, so only that one is omitted: p1 is
// declared through l1.
TEST(EngineTest, OmissionsAreTheSameForSmallAndLargeOwners) {
  for (int k : {3, 16, 17, 40}) {
    std::string params, children, modules, declared;
    for (int i = 0; i < k; ++i) {
      absl::StrAppend(&params, i ? ", " : "", "\"p", i, "\": {\"shape\": [4]}");
      absl::StrAppend(&children, i ? ", " : "", "\"l", i, "\": \"m", i, "\"");
      absl::StrAppend(&modules, ", \"m", i, "\": {\"type\": \"Linear\", \"forward\": [\"x\"], \"params\": {\"weight\": \"p", i,
                      "\"", i == 0 ? ", \"bias\": \"p1\"" : "", "}}");
      if (i + 1 < k) absl::StrAppend(&declared, i ? ", " : "", "\"l", i, ".weight\": {}");
    }
    const std::string doc = absl::StrCat(
        R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {)J", params,
        R"J(}, "root": "model", "modules": {"model": {"forward": ["x"], "children": {"block": "block"}}, )J",
        R"J("block": {"forward": ["x"], "children": {)J", children, "}}", modules,
        R"J(}, "providers": {"sharding": {"block": {"params": {)J", declared,
        R"J(}, "in_src": {}, "in_dst": {}}}}})J");
    Result r = CheckDoc(doc);
    ASSERT_EQ(Codes(r), (std::vector<std::string>{"omitted-parameters"})) << "k=" << k;
    const std::string last = absl::StrCat("l", k - 1, ".weight");
    EXPECT_EQ(r.diagnostics[0].message, FormatMessage(Code::kOmittedParameters, {"block", std::vector<std::string_view>{last}})) << "k=" << k;
  }
}

// An owner that declares at most 16 params is claimed without the
// per-thread stamps, one that declares more with them: the same findings
// either way. The omitted weight is parameter 0, which unknown
// parameters must not be taken to declare.
TEST(EngineTest, OmissionsOfLeafOwnersAreTheSameWithFewAndManyDeclarations) {
  for (int unknown : {0, 1, 15, 16, 20}) {
    std::string declared = R"J("bias": {})J";
    for (int i = 0; i < unknown; ++i) absl::StrAppend(&declared, ", \"u", i, "\": {}");
    const std::string doc = absl::StrCat(
        R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"w": {}, "b": {}, "s": {}},)J",
        R"J( "root": "model", "modules": {"model": {"children": {"lin": "lin"}},)J",
        R"J( "lin": {"forward": ["x"], "params": {"weight": "w", "bias": "b", "scale": "s", "again": "b"}}},)J",
        R"J( "providers": {"sharding": {"lin": {"params": {)J", declared, R"J(}, "in_src": {}, "in_dst": {}}}}})J");
    Result r = CheckDoc(doc);
    std::vector<std::string> codes(unknown, "unknown-parameter");
    codes.push_back("omitted-parameters");
    ASSERT_EQ(Codes(r), codes) << "unknown=" << unknown;
    EXPECT_EQ(r.diagnostics.back().message, FormatMessage(Code::kOmittedParameters, {"lin", std::vector<std::string_view>{"weight", "scale"}})) << unknown;
  }
}

// A leaf owner that declares its own slots in their order is claimed on a
// short path (each param names its slot); any other declaration takes the
// general one. Both record the same: here the tied slot "again" is dropped
// after "bias" in the module's order, and "bias" stays canonical.
TEST(EngineTest, LeafOwnersDeclaringTheirSlotsInOrderAreClaimedAsTheOthers) {
  auto check = [](std::string_view declared) {
    return CheckDoc(absl::StrCat(
        R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"w": {}, "b": {}},)J",
        R"J( "root": "model", "modules": {"model": {"children": {"lin": "lin"}},)J",
        R"J( "lin": {"forward": ["x"], "params": {"weight": "w", "bias": "b", "again": "b"}}},)J",
        R"J( "providers": {"sharding": {"lin": {"params": {)J", declared, R"J(}, "in_src": {}, "in_dst": {}}}}})J"));
  };
  using Outcome = Declarations::Outcome;
  for (const char* declared : {R"J("weight": {}, "bias": {}, "again": {})J",   // in order: the short path
                               R"J("weight": {}, "again": {}, "bias": {})J"}) {  // not in order
    Result r = check(declared);
    ASSERT_TRUE(r.ok) << declared << ": " << r.diagnostics[0].message;
    const Owned& owned = *r.outcome->owned;
    const absl::Span<const ParamId> params = r.outcome->declared.ParamsOf(r.outcome->owners[0]);
    const absl::Span<const Outcome> outcomes = r.outcome->declared.OutcomesOf(r.outcome->owners[0]);
    const bool in_order = std::string_view(declared).find("bias") < std::string_view(declared).find("again");
    EXPECT_EQ(std::vector<ParamId>(params.begin(), params.end()), (std::vector<ParamId>{0, 1, 1})) << declared;
    EXPECT_EQ(std::vector<Outcome>(outcomes.begin(), outcomes.end()),
              (std::vector<Outcome>{Outcome::kRequired, Outcome::kRequired, Outcome::kDropped}))
        << declared;
    ASSERT_EQ(owned.aliases.size(), 1u) << declared;
    EXPECT_EQ(owned.aliases[0].first, in_order ? "lin.bias" : "lin.again") << declared;
  }
  // As many params as slots, but not the same names: the general path
  // reports the unknown one (b is declared through "bias" or "again", so
  // nothing is omitted); with a slot left out, the omitted one.
  Result r = check(R"J("weight": {}, "bias": {}, "scale": {})J");
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"unknown-parameter"})) << r.diagnostics[0].message;
  r = check(R"J("weight": {}, "scale": {}, "again": {})J");
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"unknown-parameter"}));
  r = check(R"J("weight": {}, "bias": {})J");  // "again" names b, declared through "bias"
  EXPECT_TRUE(r.ok);
  r = check(R"J("bias": {}, "again": {})J");
  EXPECT_EQ(Codes(r), (std::vector<std::string>{"omitted-parameters"}));
}

TEST(EngineTest, PlanIsCheckedOnlyWhenCollectionSucceeded) {
  std::string plan = R"J(, "plan": {"modules": {"embed": {"params": {}, "in_src": {}, "in_dst": {}}}})J";
  Result failed = CheckDoc(Doc(R"J({"sharding": {"embed": {"params": {}, "in_src": {}, "in_dst": {}}}})J", plan));
  EXPECT_EQ(Codes(failed), (std::vector<std::string>{"omitted-parameters"}));
  Result checked = CheckDoc(Doc(kTiedSame, plan));
  EXPECT_EQ(Codes(checked), (std::vector<std::string>{"override-removed-ownership", "override-removed-coverage"}));
}

// Coverage counts each expected parameter once, however many plan entries
// or names declare it, and never one that no owner expects.
TEST(EngineTest, PlanCoverageCountsEachExpectedParameterOnce) {
  const std::string entry = R"J({"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}})J";
  const std::string norm = R"J("norm": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}})J";
  // The tied parameter, expected by two owners and declared by two entries.
  Result both = CheckDoc(Doc(kTiedSame, absl::StrCat(R"J(, "plan": {"modules": {"embed": )J", entry,
                                                      R"J(, "head": )J", entry, ", ", norm, "}}")));
  EXPECT_TRUE(both.diagnostics.empty()) << both.diagnostics[0].message;
  // The norm's weight, which no owner expects, does not stand in for it.
  Result unexpected = CheckDoc(Doc(kTiedSame, absl::StrCat(R"J(, "plan": {"modules": {)J", norm, "}}")));
  ASSERT_EQ(Codes(unexpected), std::vector<std::string>{"override-removed-coverage"});
  EXPECT_EQ(unexpected.diagnostics[0].parameter, "embed.weight");
  // One entry naming the tied parameter twice does not stand in for the
  // norm's weight its owner expects.
  Result twice = CheckDoc(Doc(R"J({"sharding": {"": {"params": {"norm.weight": {"tp": "R"},
      "embed.weight": {"tp": "S(0)"}, "head.weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}})J",
                              R"J(, "plan": {"modules": {"": {"params": {"embed.weight": {"tp": "S(0)"},
      "head.weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}})J"));
  ASSERT_EQ(Codes(twice), (std::vector<std::string>{"override-removed-ownership", "override-removed-coverage"}));
  EXPECT_EQ(twice.diagnostics[1].parameter, "norm.weight");
}

// Native owners are added request by request, pattern by pattern, each
// pattern's hits in path order, however the patterns are matched (all in
// one pass over the paths; ASCII FQNs through quick tests first).
TEST(EngineTest, NativeOwnersComeInRequestPatternAndPathOrder) {
  for (const std::string head : {"head", "h\xc3\xa9" "ad"}) {
    const std::string json = absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2},
      "parameters": {"w0": {}, "w1": {}, "w2": {}, "n": {}, "h": {}}, "root": "root",
      "modules": {
        "root": {"children": {"layers": "list", "norm": "nrm", ")J", head, R"J(": "h"}},
        "list": {"children": {"0": "b0", "1": "b1", "2": "b2"}},
        "b0": {"children": {"mlp": "m0"}}, "b1": {"children": {"mlp": "m1"}}, "b2": {"children": {"mlp": "m2"}},
        "m0": {"forward": ["x"], "params": {"weight": "w0"}}, "m1": {"forward": ["x"], "params": {"weight": "w1"}},
        "m2": {"forward": ["x"], "params": {"weight": "w2"}}, "nrm": {"forward": ["x"], "params": {"weight": "n"}},
        "h": {"forward": ["x"], "params": {"weight": "h"}}},
      "providers": {"native": [
        {"match": ["layers.2.*", "norm"], "sharding": {"params": {"weight": {"tp": "R"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}},
        {"match": ["h*ad", "layers.[01].mlp", "layers.9*"],
         "sharding": {"params": {"weight": {"tp": "R"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}]}})J");
    Result r = CheckDoc(json);
    ASSERT_EQ(Codes(r), std::vector<std::string>{"native-no-match"}) << head;
    EXPECT_EQ(r.diagnostics[0].message, "native binding pattern 'layers.9*' matched no module");
    EXPECT_EQ(*r.diagnostics[0].pointer, "/providers/native/1/match/2");
    r = CheckDoc(absl::StrReplaceAll(json, {{R"(, "layers.9*")", ""}}));
    ASSERT_TRUE(r.ok) << head;
    std::vector<std::string> owners;
    for (const auto& entry : r.outcome->owners) owners.emplace_back(r.outcome->tree->fqn(entry.path));
    EXPECT_EQ(owners, (std::vector<std::string>{"layers.2.mlp", "norm", head, "layers.0.mlp", "layers.1.mlp"}));
  }
}

// A plan entry that repeats its owner's params takes their parameters from
// claims; one that changes them resolves its own. Either way a shared
// parameter given two placements is a conflict, wherever the owners are.
TEST(EngineTest, PlanEntriesRepeatingTheirOwnersParamsAreCheckedAsTheOthers) {
  const std::string providers = R"J({"sharding": {
      "embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}},
      "norm": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}},
      "head": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}})J";
  auto plan = [](std::string_view embed) {
    return absl::StrCat(R"J(, "plan": {"modules": {"embed": {"params": {"weight": {"tp": ")J", embed,
                        R"J("}}, "in_src": {}, "in_dst": {}},
      "norm": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}},
      "head": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}})J");
  };
  Result r = CheckDoc(Doc(providers, plan("S(1)")));
  ASSERT_EQ(Codes(r), std::vector<std::string>{"override-shared-conflict"});
  EXPECT_EQ(r.diagnostics[0].message, "explicit overrides give shared parameter 'head.weight' conflicting layouts");
  EXPECT_EQ(*r.diagnostics[0].pointer, "/plan/modules/head/params/weight");
  r = CheckDoc(Doc(providers, plan("S(0)")));
  EXPECT_TRUE(r.ok) << r.diagnostics[0].message;
}

// A plan entry that repeats its owner's layout as it is needs no new port or
// placement check (the owner's passed); any change to what those checks
// read is checked again.
TEST(EngineTest, PlanEntriesChangingTheirOwnersLayoutHaveTheirPortsAndPlacementsChecked) {
  constexpr char kPorts[] = R"J("in_src": {"x": {"tp": "R"}}, "in_dst": {"x": {"tp": "R"}})J";
  const std::string owner = absl::StrCat(R"J("norm": {"params": {"weight": {"tp": "R"}}, )J", kPorts, "}");
  const std::string providers = absl::StrCat(R"J({"sharding": {)J", owner, "}}");
  auto plan_codes = [&](std::string_view entry) {
    return Codes(CheckDoc(Doc(providers, absl::StrCat(R"J(, "plan": {"modules": {)J", entry, "}}"))));
  };
  EXPECT_EQ(plan_codes(owner), std::vector<std::string>{});
  const std::vector<std::pair<std::string, std::string>> changes = {
      {absl::StrCat(R"J("norm": {"params": {"weight": {"tp": "R"}}, "local_compute_fn": "f", )J", kPorts, "}"),
       "legacy-injection"},
      {R"J("norm": {"params": {"weight": {"tp": "R"}}, "in_src": {"x": {"tp": "R"}}, "in_dst": {"y": {"tp": "R"}}})J",
       "ports-mismatch"},
      {R"J("norm": {"params": {"weight": {"tp": "R"}}, "in_src": {"y": {"tp": "R"}}, "in_dst": {"y": {"tp": "R"}}})J",
       "unknown-forward-input"},
      {absl::StrCat(R"J("norm": {"params": {"weight": {"tp": "R"}}, "out_names": ["o", "o"], )J", kPorts, "}"),
       "duplicate-output-name"},
      {absl::StrCat(R"J("norm": {"params": {"weight": {"tp": "R"}}, "out_src": {"o": {"zz": "R"}}, )J", kPorts, "}"),
       "unknown-axis"},
      {absl::StrCat(R"J("norm": {"params": {"weight": {"tp": "P"}}, )J", kPorts, "}"), "partial-parameter"},
  };
  for (const auto& [entry, code] : changes) EXPECT_EQ(plan_codes(entry), std::vector<std::string>{code}) << entry;
}

TEST(EngineTest, ResultJsonIsByteStable) {
  const std::string doc = Doc(kTiedSame);
  const std::string a = ResultToJson(CheckDoc(doc)), b = ResultToJson(CheckDoc(doc));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a,
            R"J({"schema":"shardplan.result.v1","diagnostics":[],"ok":true,"groups":[],"counts":{},)J"
            R"J("owned":{"specs":{"embed":{"params":)J"
            R"J({"weight":{"tp":"S(0)"}},"in_src":{},"in_dst":{}},"head":{"params":{},"in_src":{},"in_dst":{}}},)J"
            R"J("parallel":{},"owned_names":["embed.weight","head.weight"],"expected":["e"],"required":)J"
            R"J({"embed":["e"],"head":[]},"aliases":[["embed.weight","head.weight"]]}})J");
}

TEST(EngineTest, InvalidDocumentIsOneDiagnosticAndNoOwned) {
  Result r = CheckDoc("{\"schema\": ");
  ASSERT_FALSE(r.ok);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].code, "invalid-document");
  EXPECT_EQ(r.outcome, nullptr);
  EXPECT_NE(ResultToJson(r).find("\"ok\":false"), std::string::npos);
}

TEST(EngineTest, NonPositiveLimitsAreMisuse) {
  CheckOptions options;
  options.limits.max_paths = 0;
  EXPECT_EQ(Check("{}", options).status().code(), absl::StatusCode::kInvalidArgument);
}

// A streamed result writes nothing for a run the engine refuses, and the
// same writer then takes the next result; an invalid document's one
// diagnostic is streamed too.
TEST(EngineTest, AResultJsonWriterWritesNothingForMisuseAndTakesTheNextResult) {
  std::ostringstream out;
  ResultJsonWriter json(out);
  CheckOptions options;
  options.stream = &json;
  options.limits.max_paths = 0;
  EXPECT_FALSE(Check("{}", options).ok());
  EXPECT_EQ(out.str(), "");
  options.limits = {};
  for (const std::string& text : {std::string("{\"schema\": "), Doc(kTiedSame)}) {
    out.str("");
    const absl::StatusOr<Result> r = Check(text, options);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->diagnostics.empty());
    json.Finish(*r);
    EXPECT_EQ(out.str(), ResultToJson(CheckDoc(text)));
  }
}

// Regression: Document::Clone, which PlanParsed (sp_document_plan) plans
// a copy with, dropped the pipeline plan, and with it its checks.
TEST(EngineTest, PlanParsedKeepsThePipelinePlan) {
  const std::string json = R"J({"schema": "shardplan.v1", "mesh": {"tp": 1}, "parameters": {}, "root": "m",
    "modules": {"m": {"children": {"norm": "n"}}, "n": {"forward": ["h"]}},
    "pipeline": {"modules": {"nrom": [["h"], ["h"]]}}})J";
  ParseResult parsed = ParseDocument(json, {});
  ASSERT_TRUE(parsed.document != nullptr);
  const absl::StatusOr<Result> planned = PlanParsed(*parsed.document, 1);
  const absl::StatusOr<Result> want = Plan(json, {});
  ASSERT_TRUE(planned.ok() && want.ok());
  EXPECT_EQ(Codes(*planned), std::vector<std::string>{"pipeline-unknown-module"});
  EXPECT_EQ(ResultToJson(*planned), ResultToJson(*want));
}

TEST(EngineTest, CheckParsedEqualsCheckAndReusesTheDocument) {
  const std::string json = Doc(kTiedSame);
  ParseResult parsed = ParseDocument(json, {});
  ASSERT_TRUE(parsed.document != nullptr);
  std::shared_ptr<const Document> doc(std::move(parsed.document));
  const std::string want = ResultToJson(CheckDoc(json));
  for (int threads : {1, 2}) {
    absl::StatusOr<Result> r = CheckParsed(doc, threads);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(ResultToJson(*r), want);
  }
  EXPECT_EQ(CheckParsed(nullptr, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckParsed(doc, -1).status().code(), absl::StatusCode::kInvalidArgument);
}

// norm is unowned; a tp template plans it, or a plan declares it.
Result PlanDoc(std::string_view extra) {
  absl::StatusOr<Result> r = Plan(Doc(kTiedSame, extra), {});
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

TEST(EngineTest, PlanFillsTheRestFromTemplates) {
  Result r = PlanDoc(R"J(, "templates": [{"axis": "tp", "rules": {"norm": "grouped_gemm"}}])J");
  ASSERT_TRUE(r.ok) << ResultToJson(r);
  ASSERT_TRUE(r.outcome->planned.has_value());
  ASSERT_EQ(r.outcome->planned->entries.size(), 3u);
  EXPECT_EQ(r.outcome->planned->provenance[2], std::vector<std::string>{"template:tp:norm"});
  const std::string json = ResultToJson(r);
  EXPECT_NE(json.find(R"J("plan":{"modules":{"embed":)J"), std::string::npos) << json;
  EXPECT_NE(json.find(R"J("norm":{"params":{"weight":{"tp":"S(0)"}},"in_src":{},"in_dst":{}})J"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"J("provenance":{"embed":["owned:model"],"head":["owned:model"],"norm":["template:tp:norm"]})J"),
            std::string::npos)
      << json;
  // e [16, 4] float32 sharded S(0) over tp=2 (8 x 4 x 4 bytes), n [4] S(0):
  // 2 x 4 bytes; dp absent from the mesh: 2 devices.
  ASSERT_TRUE(r.outcome->planned->memory.has_value());
  EXPECT_EQ(r.outcome->planned->memory->devices, 2u);
  EXPECT_EQ(r.outcome->planned->memory->max_bytes, 128u + 8u);
  EXPECT_EQ(r.outcome->planned->memory->unsharded_bytes, 256u + 16u);
  EXPECT_NE(json.find(R"J("collectives":{})J"), std::string::npos) << json;
}

// A template's entry placing a parameter tied to an owner's otherwise: the
// conflict points at the rule (its value is a style name, with no params to
// point into) and its fix is help alone, having nothing to replace there.
// Found by plan_fuzz (fuzz/regressions/plan_fuzz/template-shared-conflict.json).
TEST(EngineTest, ATemplatesSharedConflictPointsAtItsRule) {
  absl::StatusOr<Result> r = Plan(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2},
    "parameters": {"q": {"shape": [64, 64]}},
    "root": "model",
    "modules": {"model": {"children": {"embed": "embed", "proj": "proj"}},
                "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "q"}},
                "proj": {"type": "Linear", "forward": ["x"], "params": {"weight": "q"}}},
    "providers": {"sharding": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
    "templates": [{"axis": "tp", "rules": {"proj": "rowwise"}}]})J",
                                  {});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto d = std::find_if(r->diagnostics.begin(), r->diagnostics.end(),
                              [](const Diagnostic& d) { return d.code == "override-shared-conflict"; });
  ASSERT_NE(d, r->diagnostics.end()) << ResultToJson(*r);
  EXPECT_EQ(d->pointer, "/templates/0/rules/proj");
  ASSERT_NE(d->fix_it, nullptr);
  EXPECT_TRUE(d->fix_it->fix.empty());
  EXPECT_NE(d->fix_it->help.find("declare the same placements in both"), std::string::npos) << d->fix_it->help;
}

TEST(EngineTest, ShapeFindingsAreErrorsInPlanAndWarningsInCheck) {
  // S(1) on the rank-1 norm weight.
  const std::string bad = R"J("norm": {"params": {"weight": {"tp": "S(1)"}}, "in_src": {}, "in_dst": {}})J";
  Result planned = PlanDoc(absl::StrCat(R"J(, "overrides": {)J", bad, "}"));
  EXPECT_FALSE(planned.ok);
  EXPECT_EQ(Codes(planned), std::vector<std::string>{"shard-dim-out-of-range"});
  absl::StatusOr<Result> checked = Check(
      Doc(kTiedSame, absl::StrCat(R"J(, "plan": {"modules": {"embed": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}, )J",
                                  bad, "}}")),
      {});
  ASSERT_TRUE(checked.ok());
  EXPECT_TRUE(checked->ok) << ResultToJson(*checked);
  ASSERT_EQ(Codes(*checked), std::vector<std::string>{"shard-dim-out-of-range"});
  EXPECT_EQ(checked->diagnostics[0].severity, Severity::kWarning);
}

TEST(EngineTest, PlanOfADocumentWithAPlanChecksIt) {
  absl::StatusOr<Result> r = Plan(Doc(kTiedSame, R"J(, "plan": {"modules": {}})J"), {});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->outcome->planned.has_value());
  EXPECT_EQ(Codes(*r), std::vector<std::string>{"override-removed-coverage"});
}

TEST(EngineTest, PlanningAParsedDocumentEqualsPlanningItsText) {
  // Every field of the document must survive Document::Clone.
  const std::vector<std::string> docs = {
      Doc(kTiedSame, R"J(, "templates": [{"axis": "tp", "prefix": "", "rules": {"norm": "colwise"}}],
                         "overrides": {"head": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}})J"),
      Doc(kTiedSame, R"J(, "plan": {"modules": {}})J"),
      Doc(R"J({"native": [{"match": ["nor?"], "parallel": {"binding_kind": "tp", "axes": ["tp"]},
                          "sharding": {"params": {"weight": {"tp": "R"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}]})J"),
      R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"q": {"shape": [4, 4]}}, "root": "m",
           "modules": {"m": {"children": {"attn": "a"}},
                       "a": {"forward": ["x"], "params": {"q": "q"}, "family": {
                         "sharding": {"params": {"q": {"tp": "S(0)"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}}}})J"};
  for (const std::string& json : docs) {
    ParseResult parsed = ParseDocument(json, {});
    ASSERT_TRUE(parsed.document != nullptr) << parsed.error->message;
    absl::StatusOr<Result> from_text = Plan(json, {});
    absl::StatusOr<Result> from_parsed = PlanParsed(*parsed.document, 1);
    ASSERT_TRUE(from_text.ok() && from_parsed.ok());
    // Planning twice from one parsed document gives the same again.
    EXPECT_EQ(ResultToJson(*PlanParsed(*parsed.document, 2)), ResultToJson(*from_text));
    // The result outlives the parsed document (its copy keeps the maps its
    // layouts share with it).
    parsed.document.reset();
    EXPECT_EQ(ResultToJson(*from_parsed), ResultToJson(*from_text));
  }
}

TEST(EngineTest, PlanReportsEveryProblemAtOnce) {
  // A template conflict, an override of no module and an uneven shard.
  // Without an owner the rest of the plan checks do not run (spec section 6).
  absl::StatusOr<Result> r = Plan(R"J({"schema": "shardplan.v1", "mesh": {"tp": 4},
    "parameters": {"w": {"shape": [10, 4]}}, "root": "m",
    "modules": {"m": {"children": {"lin": "l"}}, "l": {"type": "Linear", "forward": ["x"], "params": {"weight": "w"}}},
    "templates": [{"axis": "tp", "rules": {"lin": "colwise", "lin.weight": "rowwise"}}],
    "overrides": {"nope": {"params": {}, "in_src": {}, "in_dst": {}}}})J",
                                  {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Codes(*r), (std::vector<std::string>{"template-conflict", "unknown-module", "uneven-shard"}));
  EXPECT_EQ(r->diagnostics[2].severity, Severity::kWarning);
  EXPECT_FALSE(r->ok);
}

TEST(EngineTest, OverridesThatBreakOwnershipAreReportedByPlan) {
  // embed and head own the tied "e" with S(0).
  auto codes = [](std::string_view overrides) {
    return Codes(PlanDoc(absl::StrCat(R"J(, "overrides": )J", overrides)));
  };
  // head's weight is the tied alias: its reduced layout no longer declares
  // it, so emptying embed also leaves "e" uncovered.
  EXPECT_EQ(codes(R"J({"embed": {"params": {}, "in_src": {}, "in_dst": {}}})J"),
            (std::vector<std::string>{"override-removed-ownership", "override-removed-coverage",
                                      "unplanned-parameters"}));
  EXPECT_EQ(codes(R"J({"head": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}}})J"),
            (std::vector<std::string>{"override-shared-conflict", "unplanned-parameters"}));
  EXPECT_EQ(codes(R"J({"head": {"params": {}, "in_src": {}, "in_dst": {}}})J"),
            (std::vector<std::string>{"unplanned-parameters"}));  // head requires nothing: embed owns "e"
  EXPECT_EQ(codes(R"J({"nowhere": {"params": {}, "in_src": {}, "in_dst": {}}})J"),
            (std::vector<std::string>{"unknown-module", "unplanned-parameters"}));
  EXPECT_EQ(codes(R"J({"embed": {"params": {"weight": {"pp": "S(0)"}}, "in_src": {}, "in_dst": {}}})J"),
            (std::vector<std::string>{"unknown-axis", "unplanned-parameters"}));

  // A family member whose layout was already applied cannot be changed.
  absl::StatusOr<Result> r = Plan(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2},
    "parameters": {"q": {"shape": [4, 4]}}, "root": "m",
    "modules": {"m": {"children": {"attn": "a"}},
                "a": {"forward": ["x"], "params": {"q": "q"}, "family": {
                  "sharding": {"params": {"q": {"tp": "S(0)"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}},
                  "cached": {"sharding":
                  {"params": {"q": {"tp": "S(0)"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}}}},
    "overrides": {"attn": {"params": {"q": {"tp": "S(1)"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}})J",
                                  {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Codes(*r), std::vector<std::string>{"family-layout-changed"});
}

TEST(EngineTest, EveryStyleOnLinearAndEmbeddingModules) {
  for (size_t s = 0; s < kStyleCount; ++s) {
    const Style style = static_cast<Style>(s);
    SCOPED_TRACE(StyleName(style));
    absl::StatusOr<Result> r = Plan(absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2},
      "parameters": {"w": {"shape": [8, 4]}, "b": {"shape": [8]}, "e": {"shape": [16, 4]}}, "root": "m",
      "modules": {"m": {"children": {"lin": "lin", "emb": "emb"}},
                  "lin": {"type": "Linear", "forward": ["*args", "x", "**kwargs"], "params": {"weight": "w", "bias": "b"}},
                  "emb": {"type": "Embedding", "forward": ["input"], "params": {"weight": "e"}}},
      "templates": [{"axis": "tp", "rules": {"lin": ")J",
                                                 StyleName(style), R"J(", "emb": ")J", StyleName(style), R"J("}}]})J"),
                                    {});
    ASSERT_TRUE(r.ok() && r->outcome->planned.has_value());
    const Document& doc = *r->outcome->document;
    auto spell = [&](const MapRef& map, std::string_view name) -> std::string {
      if (!map) return "absent";
      for (const PlacementEntry& e : *map) {
        if (doc.Name(e.name) == name) return FormatPlacement(e.placements.at(0).placement);
      }
      return "-";
    };
    auto expect = [](const std::optional<Placement>& p) { return p ? FormatPlacement(*p) : "-"; };
    for (const FqnLayout& entry : r->outcome->planned->entries) {
      const bool embedding = doc.Name(entry.fqn) == "emb";
      const StylePlacements want = PlacementsOf(style, embedding);
      EXPECT_EQ(spell(entry.layout.params(), "weight"), expect(want.weight)) << doc.Name(entry.fqn);
      if (!embedding) {
        EXPECT_EQ(spell(entry.layout.params(), "bias"), expect(want.bias));
      }
      const std::string input = embedding ? "input" : "x";  // the first named input, not *args
      EXPECT_EQ(spell(entry.layout.in_src(), input), expect(want.in ? std::optional(want.in->first) : std::nullopt));
      EXPECT_EQ(spell(entry.layout.in_dst(), input), expect(want.in ? std::optional(want.in->second) : std::nullopt));
      EXPECT_EQ(spell(entry.layout.out_src(), "output"),
                want.out ? FormatPlacement(want.out->first) : std::string("absent"));
      EXPECT_EQ(spell(entry.layout.out_dst(), "output"),
                want.out ? FormatPlacement(want.out->second) : std::string("absent"));
    }
    EXPECT_EQ(r->outcome->planned->entries.size(), 2u);
  }
}

TEST(EngineTest, TextReleasedEarlyGivesTheSameResultsAndIsReleasedOnce) {
  for (const std::string& json : {Doc(kTiedSame), Doc(kTiedSame, R"J(, "templates": [{"axis": "tp", "rules": {"norm": "colwise"}}])J"),
                                  std::string("{\"schema\": ")}) {
    for (bool plan : {false, true}) {
      // The text is overwritten when released: a check that read it after
      // the release would see a different document.
      std::string text = json;
      int releases = 0;
      auto release = [&] {
        ++releases;
        std::fill(text.begin(), text.end(), ' ');
      };
      absl::StatusOr<Result> r = plan ? PlanText(text, release, {}) : CheckText(text, release, {});
      EXPECT_EQ(ResultToJson(*r), ResultToJson(*(plan ? Plan(json, {}) : Check(json, {}))));
      EXPECT_EQ(releases, 1);
    }
  }
  CheckOptions bad_threads, bad_limits;
  bad_threads.threads = -1;
  bad_limits.limits.max_paths = 0;
  for (const CheckOptions& bad : {bad_threads, bad_limits}) {
    int releases = 0;
    EXPECT_EQ(CheckText("{}", [&] { ++releases; }, bad).status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(releases, 1);
  }
}

}  // namespace
}  // namespace shardplan

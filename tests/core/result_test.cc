// The result's views of the owners and the owned parameters against its JSON
// and the examples.
#include "core/result.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/engine.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tests/support/read_file.h"

namespace shardplan {
namespace {

namespace fs = std::filesystem;

Result CheckText(const std::string& text) {
  absl::StatusOr<Result> r = Check(text, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

std::string Compact(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// "fqn kind [request pattern-index pattern] pointer" per owner.
std::vector<std::string> Describe(const OwnersView& owners) {
  std::vector<std::string> out;
  for (size_t i = 0; i < owners.size(); ++i) {
    const OwnerView o = owners.owner(i);
    std::string line = std::string(o.fqn) + " " + std::string(o.kind);
    if (o.native_request) {
      line += " " + std::to_string(*o.native_request) + " " + std::to_string(o.native_pattern_index.value_or(99)) +
              " " + std::string(o.native_pattern);
    } else {
      EXPECT_FALSE(o.native_pattern_index.has_value());
      EXPECT_EQ(o.native_pattern, "");
    }
    out.push_back(line + " " + o.pointer);
  }
  return out;
}

TEST(ResultTest, OwnersOfAPassingCheckAreItsSpecsWithTheirKindAndOrigin) {
  const Result r = CheckText(ReadFile("examples/tiny-llama.json").value());
  ASSERT_TRUE(r.ok);
  const std::optional<OwnersView> owners = OwnersOf(r);
  ASSERT_TRUE(owners.has_value());
  EXPECT_EQ(Describe(*owners), (std::vector<std::string>{
                                   "embed_tokens model /providers/sharding/embed_tokens",
                                   "lm_head model /providers/sharding/lm_head",
                                   "layers.0.self_attn family /modules/layers.0.self_attn/family/sharding",
                                   "layers.1.self_attn family /modules/layers.1.self_attn/family/sharding",
                                   "layers.0.mlp native 0 0 layers.*.mlp /providers/native/0/sharding",
                                   "layers.1.mlp native 0 0 layers.*.mlp /providers/native/0/sharding",
                               }));
  // The layouts are the result's owned.specs, owner by owner; the two MLPs
  // share their request's, the two attention blocks their equal layouts.
  rapidjson::Document json;
  json.Parse(ResultToJson(r).c_str());
  const rapidjson::Value& specs = json["owned"]["specs"];
  const OwnerLayouts layouts = owners->Layouts();
  ASSERT_EQ(layouts.of_owner.size(), owners->size());
  size_t i = 0;
  for (auto it = specs.MemberBegin(); it != specs.MemberEnd(); ++it, ++i) {
    ASSERT_LT(i, owners->size());
    EXPECT_EQ(it->name.GetString(), owners->owner(i).fqn);
    EXPECT_EQ(layouts.texts[layouts.of_owner[i]], Compact(it->value)) << it->name.GetString();
  }
  EXPECT_EQ(i, owners->size());
  EXPECT_EQ(layouts.of_owner[2], layouts.of_owner[3]);
  EXPECT_EQ(layouts.of_owner[4], layouts.of_owner[5]);
  EXPECT_EQ(layouts.texts.size(), 4u);
  // lm_head's weight is tied to embed_tokens' with the same placement:
  // dropped from its layout, as the result prints it.
  EXPECT_EQ(layouts.texts[layouts.of_owner[1]].rfind(R"J({"params":{},)J", 0), 0u) << layouts.texts[layouts.of_owner[1]];
}

TEST(ResultTest, OwnedParametersAreTheOwnedNamesWithTheirClaimAndCanonicalName) {
  const Result r = CheckText(ReadFile("examples/tiny-llama.json").value());
  ASSERT_TRUE(r.ok);
  const std::optional<OwnersView> owners = OwnersOf(r);
  const std::optional<OwnedParametersView> params = OwnedParametersOf(r);
  ASSERT_TRUE(params.has_value());
  rapidjson::Document json;
  json.Parse(ResultToJson(r).c_str());
  std::vector<std::string> names, want;
  for (const rapidjson::Value& n : json["owned"]["owned_names"].GetArray()) want.emplace_back(n.GetString());
  for (size_t i = 0; i < params->size(); ++i) names.push_back(params->parameter(i).name);
  // named_parameters(root) order: embed_tokens first, lm_head last.
  EXPECT_EQ(names.front(), "embed_tokens.weight");
  EXPECT_EQ(names.back(), "lm_head.weight");
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, want);

  auto find = [&](std::string_view name) {
    for (size_t i = 0; i < params->size(); ++i) {
      if (params->parameter(i).name == name) return params->parameter(i);
    }
    ADD_FAILURE() << name;
    return OwnedParameterView{};
  };
  using Placements = std::vector<std::pair<std::string_view, std::string>>;
  const OwnedParameterView tied = find("lm_head.weight");
  EXPECT_EQ(tied.canonical, "embed_tokens.weight");
  EXPECT_EQ(owners->owner(tied.owner).fqn, "embed_tokens");
  EXPECT_EQ(tied.placements, (Placements{{"dp", "R"}, {"tp", "S(0)"}}));
  const OwnedParameterView embed = find("embed_tokens.weight");
  EXPECT_EQ(embed.canonical, "embed_tokens.weight");
  EXPECT_EQ(embed.owner, tied.owner);
  const OwnedParameterView o_proj = find("layers.1.self_attn.o_proj.weight");
  EXPECT_EQ(o_proj.canonical, o_proj.name);
  EXPECT_EQ(owners->owner(o_proj.owner).fqn, "layers.1.self_attn");
  EXPECT_EQ(o_proj.placements, (Placements{{"dp", "R"}, {"tp", "S(1)"}}));
  const OwnedParameterView down = find("layers.0.mlp.down_proj.weight");
  EXPECT_EQ(owners->owner(down.owner).kind, "native");
}

TEST(ResultTest, AFailedCheckKeepsTheOwnersAsCollectedButHasNoOwnedParameters) {
  const Result r = CheckText(ReadFile("examples/tiny-llama-broken.json").value());
  ASSERT_FALSE(r.ok);
  const std::optional<OwnersView> owners = OwnersOf(r);
  ASSERT_TRUE(owners.has_value());
  // Its native pattern matches no module: no native owner.
  EXPECT_EQ(Describe(*owners), (std::vector<std::string>{
                                   "embed_tokens model /providers/sharding/embed_tokens",
                                   "lm_head model /providers/sharding/lm_head",
                                   "layers.0.self_attn family /modules/layers.0.self_attn/family/sharding",
                                   "layers.1.self_attn family /modules/layers.1.self_attn/family/sharding",
                               }));
  const OwnerLayouts layouts = owners->Layouts();
  // shared-conflict: lm_head's weight has another placement, nothing dropped.
  EXPECT_EQ(layouts.texts[layouts.of_owner[1]].rfind(R"J({"params":{"weight":{"dp":"R","tp":"S(1)"}},)J", 0), 0u)
      << layouts.texts[layouts.of_owner[1]];
  EXPECT_FALSE(OwnedParametersOf(r).has_value());
}

TEST(ResultTest, AnInvalidDocumentHasNoOwners) {
  const Result r = CheckText("{\"schema\": ");
  EXPECT_FALSE(OwnersOf(r).has_value());
  EXPECT_FALSE(OwnedParametersOf(r).has_value());
}

// A family replaces the model provider of its module, a cached family
// layout is the owner's, and a native request's owners name the pattern
// that added each: the first of its patterns that matches.
TEST(ResultTest, OwnerKindsAndNativePatternsFollowCollection) {
  const Result r = CheckText(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {}, "root": "m",
    "modules": {"m": {"children": {"a": "x", "b": "y", "c": "z", "fam": "f"}},
                "x": {"forward": ["i"]}, "y": {"forward": ["i"]}, "z": {"forward": ["i"]},
                "f": {"forward": ["i"], "family": {"sharding": {"params": {}, "in_src": {}, "in_dst": {}},
                       "cached": {"sharding": {"params": {}, "in_src": {"i": {}}, "in_dst": {"i": {}}}}}}},
    "providers": {"sharding": {"fam": {"params": {}, "in_src": {}, "in_dst": {}}},
                  "native": [{"match": ["b", "[ab]", "?"], "sharding": {"params": {}, "in_src": {"i": {}}, "in_dst": {"i": {}}}}]}})J");
  ASSERT_TRUE(r.ok) << r.diagnostics[0].message;
  EXPECT_EQ(Describe(*OwnersOf(r)), (std::vector<std::string>{
                                        "fam family /modules/f/family/cached/sharding",
                                        "b native 0 0 b /providers/native/0/sharding",
                                        "a native 0 1 [ab] /providers/native/0/sharding",
                                        "c native 0 2 ? /providers/native/0/sharding",
                                    }));
}

// On every conformance case that passes, the owners are owned.specs and the
// owned parameters owned_names, with the aliases as their canonical names.
TEST(ResultTest, ViewsEqualTheJsonOnEveryConformanceCase) {
  size_t passing = 0;
  for (const auto& entry : fs::directory_iterator("tests/conformance/cases")) {
    SCOPED_TRACE(entry.path().string());
    const Result r = CheckText(ReadFile(entry.path()).value());
    if (!r.ok) continue;
    ++passing;
    rapidjson::Document json;
    json.Parse(ResultToJson(r).c_str());
    const rapidjson::Value& owned = json["owned"];
    const OwnersView owners = *OwnersOf(r);
    const OwnerLayouts layouts = owners.Layouts();
    ASSERT_EQ(owners.size(), owned["specs"].MemberCount());
    size_t i = 0;
    for (auto it = owned["specs"].MemberBegin(); it != owned["specs"].MemberEnd(); ++it, ++i) {
      EXPECT_EQ(it->name.GetString(), owners.owner(i).fqn);
      EXPECT_EQ(layouts.texts[layouts.of_owner[i]], Compact(it->value));
    }
    const OwnedParametersView params = *OwnedParametersOf(r);
    std::vector<std::string> names, want;
    std::vector<std::pair<std::string, std::string>> aliases, want_aliases;
    for (size_t k = 0; k < params.size(); ++k) {
      const OwnedParameterView p = params.parameter(k);
      names.push_back(p.name);
      if (p.canonical != p.name) aliases.emplace_back(p.canonical, p.name);
      ASSERT_LT(p.owner, owners.size());
    }
    for (const rapidjson::Value& n : owned["owned_names"].GetArray()) want.emplace_back(n.GetString());
    for (const rapidjson::Value& a : owned["aliases"].GetArray()) want_aliases.emplace_back(a[0].GetString(), a[1].GetString());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, want);
    EXPECT_EQ(aliases, want_aliases);
  }
  EXPECT_GT(passing, 10u);
}

}  // namespace
}  // namespace shardplan

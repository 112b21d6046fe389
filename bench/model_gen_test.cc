#include "bench/model_gen.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/engine.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace shardplan::bench {
namespace {

struct Counts {
  int64_t owners;
  int64_t owned_names;
  int64_t aliases;
  int64_t paths;  // module paths (named_modules of the root)
};

// The counts each kind must produce, derived from the options alone (not
// from the generator's code).
Counts ExpectedDeepseek(int64_t layers, int64_t experts, int64_t dense_option) {
  const int64_t dense = std::min(dense_option, layers), moe = layers - dense;
  Counts c;
  // embed_tokens, lm_head, dense MLPs, shared experts (providers); attention
  // (families); experts, router gates, 2 norms per layer and the final norm
  // (native).
  c.owners = 2 + dense + moe + layers + moe * experts + moe + 2 * layers + 1;
  // Both tied names, 7 attention weights per layer, 3 per dense MLP, per MoE
  // layer 3 per expert + 3 shared + gate weight and bias, 2 norms per layer,
  // the final norm.
  c.owned_names = 2 + 7 * layers + 3 * dense + moe * (3 * experts + 3 + 2) + 2 * layers + 1;
  c.aliases = 1;  // lm_head.weight
  // root, embed_tokens, layers, norm, lm_head; per layer: itself, attention
  // (1 + 7), 2 norms, and a dense MLP (1 + 3) or an MoE block (itself,
  // experts list, 4 per expert, gate, shared expert 1 + 3).
  c.paths = 5 + dense * (1 + 8 + 2 + 4) + moe * (1 + 8 + 2 + 1 + 1 + 4 * experts + 1 + 4);
  return c;
}

Counts ExpectedGeneric(int64_t params, int64_t width, int64_t owned) {
  // One weight per owned Linear, no ties.
  return {owned, owned, 0, 2 + (params + width - 1) / width + params};
}

Counts ExpectedShared(int64_t paths, int64_t blocks) {
  Counts c;
  // embed_tokens, lm_head, one MLP per block and the shared proj (providers),
  // one attention per block (families), one norm per block (native, one
  // owner per module however many paths match).
  c.owners = 3 + 3 * blocks;
  // Every slot names 4 attention + 2 MLP weights, the tied norm weight and the
  // shared proj weight; plus embed_tokens.weight and lm_head.weight.
  c.owned_names = 8 * paths + 2;
  // Distinct owned parameters: embed, 6 per block, norm_w, proj: every other
  // name is an alias.
  c.aliases = c.owned_names - (3 + 6 * blocks);
  // root, embed_tokens, layers, norm, lm_head; per slot: the block, attention
  // (1 + 4), MLP (1 + 2), norm, proj, act.
  c.paths = 5 + 12 * paths;
  return c;
}

// The module paths of a document (named_modules of its root, duplicates
// kept), counted on its JSON: a module's paths are 1 + its children's.
int64_t CountPaths(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  const rapidjson::Value& modules = doc["modules"];
  std::map<std::string, int64_t> paths;
  std::function<int64_t(const std::string&)> count = [&](const std::string& id) -> int64_t {
    if (auto it = paths.find(id); it != paths.end()) return it->second;
    int64_t n = 1;
    const rapidjson::Value& module = modules[id.c_str()];
    if (module.HasMember("children")) {
      for (const auto& c : module["children"].GetObject()) n += count(c.value.GetString());
    }
    return paths[id] = n;
  };
  return count(doc["root"].GetString());
}

void ExpectChecksWith(const std::string& json, const Counts& want) {
  ASSERT_FALSE(json.empty());
  absl::StatusOr<Result> r = Check(json, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->ok) << r->diagnostics.front().code << ": " << r->diagnostics.front().message;
  // Counted on the JSON result (shardplan.result.v1), the engine's stable
  // output, rather than on its in-memory structs.
  const std::string out = ResultToJson(*r);
  rapidjson::Document result;
  result.Parse(out.data(), out.size());
  ASSERT_FALSE(result.HasParseError());
  ASSERT_TRUE(result.HasMember("owned"));
  const rapidjson::Value& owned = result["owned"];
  EXPECT_EQ(static_cast<int64_t>(owned["specs"].MemberCount()), want.owners);
  EXPECT_EQ(static_cast<int64_t>(owned["required"].MemberCount()), want.owners);
  EXPECT_EQ(static_cast<int64_t>(owned["owned_names"].Size()), want.owned_names);
  EXPECT_EQ(static_cast<int64_t>(owned["aliases"].Size()), want.aliases);

  EXPECT_EQ(CountPaths(json), want.paths);
}

GenOptions Deepseek(int layers, int experts, int dense = 3) {
  GenOptions o;
  o.kind = ModelKind::kDeepseek;
  o.layers = layers;
  o.experts = experts;
  o.dense_layers = dense;
  return o;
}

GenOptions Generic(int64_t params, double fraction = 1.0, OwnerStyle style = OwnerStyle::kMixed) {
  GenOptions o;
  o.kind = ModelKind::kGeneric;
  o.params = params;
  o.owners_fraction = fraction;
  o.owner_style = style;
  return o;
}

GenOptions Shared(int paths, int blocks) {
  GenOptions o;
  o.kind = ModelKind::kShared;
  o.paths = paths;
  o.blocks = blocks;
  return o;
}

// --- determinism -------------------------------------------------------------

TEST(ModelGenTest, SameOptionsGiveSameBytes) {
  for (GenOptions o : {Deepseek(6, 20), Generic(500, 0.5), Shared(100, 3)}) {
    o.seed = 42;
    o.plan = true;
    const std::string a = GenerateDocument(o);
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, GenerateDocument(o));
  }
}

TEST(ModelGenTest, SeedChangesGenericAndSharedDocuments) {
  for (GenOptions o : {Generic(500, 0.5), Shared(100, 3)}) {
    o.seed = 1;
    const std::string a = GenerateDocument(o);
    o.seed = 2;
    EXPECT_NE(a, GenerateDocument(o));
  }
}

TEST(ModelGenTest, DeepseekHasNoRandomnessSoTheSeedIsIgnored) {
  GenOptions o = Deepseek(6, 20);
  o.seed = 1;
  const std::string a = GenerateDocument(o);
  o.seed = 2;
  EXPECT_EQ(a, GenerateDocument(o));
}

TEST(ModelGenTest, DocumentsAreCompactJson) {
  for (const GenOptions& o : {Deepseek(4, 4), Generic(100), Shared(10, 2)}) {
    const std::string json = GenerateDocument(o);
    EXPECT_EQ(json.rfind(R"({"schema":"shardplan.v1","mesh":{)", 0), 0u) << json.substr(0, 80);
    EXPECT_EQ(json.find_first_of(" \n\t\r"), std::string::npos);
  }
}

// --- small documents check OK with the expected counts ----------------------

TEST(ModelGenTest, DeepseekChecksOk) {
  ExpectChecksWith(GenerateDocument(Deepseek(6, 20)), ExpectedDeepseek(6, 20, 3));
  // One-digit expert indexes only: the [0-9][0-9] pattern must not be emitted
  // (it would match nothing).
  ExpectChecksWith(GenerateDocument(Deepseek(4, 3, 1)), ExpectedDeepseek(4, 3, 1));
  // Only dense layers: no expert or gate request at all.
  ExpectChecksWith(GenerateDocument(Deepseek(2, 8)), ExpectedDeepseek(2, 8, 3));
}

TEST(ModelGenTest, DeepseekExpertPatternsMatchExactlyTheExperts) {
  // 1001 experts need one to four digits; a pattern like experts.* would
  // also match each expert's Linear children and fail the check.
  const std::string json = GenerateDocument(Deepseek(4, 1001, 3));
  EXPECT_NE(json.find(R"("layers.*.mlp.experts.[0-9][0-9][0-9][0-9]")"), std::string::npos);
  EXPECT_EQ(json.find(R"("layers.*.mlp.experts.*")"), std::string::npos);
  ExpectChecksWith(json, ExpectedDeepseek(4, 1001, 3));
}

TEST(ModelGenTest, DeepseekWithPlanChecksOk) {
  GenOptions o = Deepseek(5, 12);
  o.plan = true;
  const std::string json = GenerateDocument(o);
  EXPECT_NE(json.find(R"("plan":{"modules":{)"), std::string::npos);
  ExpectChecksWith(json, ExpectedDeepseek(5, 12, 3));
}

TEST(ModelGenTest, DefaultDeepseekIsDeepSeekV3Sized) {
  const std::string json = GenerateDocument(GenOptions{});
  EXPECT_GE(json.size(), 8'000'000u);
  EXPECT_LE(json.size(), 12'000'000u);
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  EXPECT_EQ(static_cast<int64_t>(doc["modules"].MemberCount()), ExpectedDeepseek(61, 256, 3).paths);
}

TEST(ModelGenTest, GenericChecksOk) {
  ExpectChecksWith(GenerateDocument(Generic(1000)), ExpectedGeneric(1000, 8, 1000));
  for (OwnerStyle style : {OwnerStyle::kProvider, OwnerStyle::kNative, OwnerStyle::kMixed}) {
    for (double fraction : {0.0, 0.001, 0.25, 1.0}) {
      GenOptions o = Generic(1003, fraction, style);  // a last, partial block
      o.plan = true;
      o.seed = 7;
      const int64_t owned = static_cast<int64_t>(fraction * 1003 + 0.5);
      EXPECT_EQ(GenericOwnerCount(o), owned);
      ExpectChecksWith(GenerateDocument(o), ExpectedGeneric(1003, 8, owned));
    }
  }
}

TEST(ModelGenTest, GenericWidthShapesTheBlocks) {
  GenOptions o = Generic(250, 0.5);
  o.width = 100;
  ExpectChecksWith(GenerateDocument(o), ExpectedGeneric(250, 100, 125));
}

TEST(ModelGenTest, SharedChecksOk) {
  ExpectChecksWith(GenerateDocument(Shared(1024, 4)), ExpectedShared(1024, 4));
  for (int seed : {0, 1, 2}) {
    GenOptions o = Shared(50, 7);
    o.seed = seed;
    o.plan = true;
    ExpectChecksWith(GenerateDocument(o), ExpectedShared(50, 7));
  }
  ExpectChecksWith(GenerateDocument(Shared(1, 1)), ExpectedShared(1, 1));
}

// --- meshes ------------------------------------------------------------------

TEST(ModelGenTest, MeshPresets) {
  const struct {
    int64_t devices;
    const char* mesh;
  } kPresets[] = {
      {8, R"("mesh":{"tp":8})"},
      {64, R"("mesh":{"dp":8,"tp":8})"},
      {512, R"("mesh":{"dp":8,"ep":8,"tp":8})"},
      {4096, R"("mesh":{"pp":8,"dp":8,"ep":8,"tp":8})"},
      {32768, R"("mesh":{"pp":8,"dp":8,"ep":64,"tp":8})"},
  };
  for (const auto& preset : kPresets) {
    SCOPED_TRACE(preset.devices);
    auto mesh = MeshForDevices(preset.devices);
    ASSERT_TRUE(mesh.has_value());
    int64_t product = 1;
    for (const MeshAxisSpec& axis : *mesh) product *= axis.size;
    EXPECT_EQ(product, preset.devices);
    for (GenOptions o : {Deepseek(4, 4), Generic(64), Shared(8, 2)}) {
      o.mesh = *mesh;
      o.plan = true;
      const std::string json = GenerateDocument(o);
      EXPECT_NE(json.find(preset.mesh), std::string::npos);
      // Layouts place tensors on every axis.
      for (const MeshAxisSpec& axis : *mesh) {
        EXPECT_NE(json.find("\"" + axis.name + "\":\""), std::string::npos) << axis.name;
      }
      absl::StatusOr<Result> r = Check(json, {});
      ASSERT_TRUE(r.ok());
      EXPECT_TRUE(r->ok) << r->diagnostics.front().message;
    }
  }
  EXPECT_FALSE(MeshForDevices(16).has_value());
}

TEST(ModelGenTest, ParseMeshSpec) {
  auto mesh = ParseMeshSpec("dp=8,ep=64,tp=8");
  ASSERT_TRUE(mesh.has_value());
  ASSERT_EQ(mesh->size(), 3u);
  EXPECT_EQ((*mesh)[1].name, "ep");
  EXPECT_EQ((*mesh)[1].size, 64);
  for (const char* bad : {"", "dp", "dp=", "=8", "dp=0", "dp=-1", "dp=8,", "dp=8x", ",dp=8"}) {
    EXPECT_FALSE(ParseMeshSpec(bad).has_value()) << bad;
  }
}

TEST(ModelGenTest, CustomMeshChecksOk) {
  GenOptions o = Deepseek(5, 10);
  o.mesh = *ParseMeshSpec("cp=2,dp=4");  // no tp or ep: parallel specs keep no axes
  o.plan = true;
  ExpectChecksWith(GenerateDocument(o), ExpectedDeepseek(5, 10, 3));
}

TEST(ModelGenTest, InvalidOptionsGiveNoDocument) {
  GenOptions o = Shared(2, 3);  // fewer paths than blocks
  EXPECT_NE(ValidateOptions(o), "");
  EXPECT_EQ(GenerateDocument(o), "");
  o = Generic(10, 1.5);
  EXPECT_NE(ValidateOptions(o), "");
  o = Deepseek(0, 4);
  EXPECT_NE(ValidateOptions(o), "");
  o = Generic(10);
  o.mesh = {{"tp", 2}, {"tp", 4}};
  EXPECT_NE(ValidateOptions(o), "");
  EXPECT_EQ(ValidateOptions(Generic(10)), "");
}

}  // namespace
}  // namespace shardplan::bench

// Deterministic generator of shardplan.v1 documents for benchmarks and tests.
//
//   shardplan::bench::GenOptions options;
//   options.kind = shardplan::bench::ModelKind::kGeneric;
//   options.params = 100'000;
//   std::string json = shardplan::bench::GenerateDocument(options);
//
// The text is compact JSON (no whitespace). The same options (seed included)
// always give the same bytes: randomness comes from a fixed 64-bit generator
// (splitmix64), never from <random>'s implementation-defined distributions.
// Every document generated with valid options checks OK (no diagnostic).
//
// Kinds:
//  - kDeepseek: a DeepSeek-V3-like mixture of experts, `layers` decoder layers
//    (the first `dense_layers` with a dense MLP, the others with `experts`
//    routed experts, a router gate and a shared expert). Owners: the tied
//    embed_tokens/lm_head and every dense MLP and shared expert through model
//    providers, every attention block as a family (parallel, tp), the experts
//    through ONE native request (ep) whose patterns match exactly the expert
//    modules (`layers.*.mlp.experts.[0-9]`, `...[0-9][0-9]`, ...), the router
//    gates and the layer norms through native requests. Uses no randomness:
//    the seed is ignored.
//  - kGeneric: `params` Linear modules with one weight each, `width` per block
//    (root -> blocks (ModuleList) -> block i -> lin0..), of which a random
//    subset of round(owners_fraction * params) is owned, by model providers,
//    by one native request (the owned Linears are then named w<j> and matched
//    by `blocks.*.w*`), or a random mix of both. The seed picks the owned
//    subset, the mix, and shapes and dtypes.
//  - kShared: heavy module sharing: a ModuleList of `paths` slots, each holding
//    one of `blocks` distinct block modules (slot i < blocks holds block i, the
//    other slots a random one), every block containing one Linear module
//    (`proj`) shared by all blocks and an RMSNorm whose weight is ONE parameter
//    tied across all blocks; the embedding and the output head are tied too.
//    Owners: attention families, MLP model providers and a native request over
//    every `layers.*.norm` path (one owner per distinct module), the shared
//    Linear through a model provider. The seed picks the block of each slot.
#ifndef SHARDPLAN_BENCH_MODEL_GEN_H_
#define SHARDPLAN_BENCH_MODEL_GEN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardplan::bench {

enum class ModelKind { kDeepseek, kGeneric, kShared };
enum class OwnerStyle { kProvider, kNative, kMixed };

struct MeshAxisSpec {
  std::string name;
  int64_t size;
};

struct GenOptions {
  ModelKind kind = ModelKind::kDeepseek;
  uint64_t seed = 0;
  // Empty: the kind's default ({"dp": 2, "ep": 8, "tp": 4} for kDeepseek,
  // {"dp": 8, "tp": 8} otherwise). Layouts place tensors on every axis.
  std::vector<MeshAxisSpec> mesh;
  // Append a final plan that passes: one entry per owner with the owner's
  // layout as claims reduce it (a tied weight already claimed with an equal
  // placement by an earlier owner is left out).
  bool plan = false;

  // kDeepseek.
  int layers = 61;
  int experts = 256;
  int dense_layers = 3;  // min(dense_layers, layers) layers have a dense MLP

  // kGeneric.
  int64_t params = 1000;
  double owners_fraction = 1.0;
  int width = 8;  // Linear modules per block
  OwnerStyle owner_style = OwnerStyle::kMixed;

  // kShared.
  int paths = 1024;  // slots of the `layers` ModuleList
  int blocks = 4;    // distinct block modules (1 <= blocks <= paths)
};

// The document, or "" when the options are out of range (see ValidateOptions).
std::string GenerateDocument(const GenOptions& options);

// An empty string when the options can be generated, else what is wrong.
std::string ValidateOptions(const GenOptions& options);

// The number of owned Linear modules of a kGeneric document:
// round(owners_fraction * params), clamped to [0, params].
int64_t GenericOwnerCount(const GenOptions& options);

// Mesh presets by device count: 8 {"tp": 8}; 64 {"dp": 8, "tp": 8};
// 512 {"dp": 8, "ep": 8, "tp": 8}; 4096 {"pp": 8, "dp": 8, "ep": 8, "tp": 8};
// 32768 {"pp": 8, "dp": 8, "ep": 64, "tp": 8}. std::nullopt for other counts.
std::optional<std::vector<MeshAxisSpec>> MeshForDevices(int64_t devices);

// "dp=8,tp=8" -> axes in that order; std::nullopt when malformed.
std::optional<std::vector<MeshAxisSpec>> ParseMeshSpec(std::string_view spec);

std::optional<ModelKind> ParseModelKind(std::string_view name);
std::optional<OwnerStyle> ParseOwnerStyle(std::string_view name);

}  // namespace shardplan::bench

#endif  // SHARDPLAN_BENCH_MODEL_GEN_H_

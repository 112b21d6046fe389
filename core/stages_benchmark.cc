// Google Benchmark suite for the engine's phases (core/), on documents from
// bench/model_gen.h. See bench/README.md for what each benchmark measures.
//
//   bazel run -c opt //core:stages_benchmark
//   bazel run -c opt //core:stages_benchmark -- --benchmark_filter='generic/params:100000/'
//
// Names are BM_<Phase>/<kind>/<size>/devices:<mesh devices>, where size is
// params:N (generic: N Linear weights, all owned), layers:N (deepseek, 256
// experts per MoE layer) or paths:N (shared: N slots of one ModuleList over 16
// distinct blocks). Each document carries a final plan for every owner.
// BM_LiteralTemplates/{check,plan}/deepseek/rules:N checks and plans the
// DeepSeek-V3-sized document with a template of N literal rules instead;
// BM_Training/plan/deepseek/training:{0,1} plans it without and with a
// training section.
//
// Models are generated, parsed and collected once per (kind, size, mesh) and
// cached; benchmarks are registered size by size, so the cache only ever holds
// one large model (larger ones are dropped when the next is built).
//
// All times are wall-clock (UseRealTime): the engine may use several threads,
// and items/s and bytes/s are computed from the same wall time.
#include <malloc.h>
#include <sys/resource.h>

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/model_gen.h"
#include "benchmark/benchmark.h"
#include "core/ownership/claims.h"
#include "core/ownership/collect.h"
#include "core/diagnostic.h"
#include "core/model/document.h"
#include "core/engine.h"
#include "core/ownership/nesting.h"
#include "core/ownership/owner_checks.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"
#include "core/model/parse.h"
#include "core/outcome.h"
#include "core/planning/plan_check.h"
#include "core/result.h"

namespace shardplan::bench {
namespace {

// One generated document and everything the phases before a benchmarked one
// produce, built once.
struct Model {
  std::string json;
  std::unique_ptr<Document> doc;
  std::unique_ptr<ModuleTree> tree;
  std::unique_ptr<Owners> collected;  // after CollectOwners (input of nesting/owner checks/claims)
  std::unique_ptr<Owners> claimed;    // after AssignParameters (input of the plan check)
  std::unique_ptr<Claims> claims;
  bool all_added = false;
  std::string error;  // non-empty: the model is unusable, benchmarks skip with it

  int64_t paths = 0;        // module paths (named_modules of the root)
  int64_t param_paths = 0;  // parameter slots over all paths (named_parameters of the root)
  int64_t owners = 0;
  int64_t plan_entries = 0;
};

using Key = std::tuple<ModelKind, int64_t, int64_t>;  // kind, size, devices

GenOptions OptionsFor(ModelKind kind, int64_t size, int64_t devices) {
  GenOptions o;
  o.kind = kind;
  o.plan = true;
  if (auto mesh = MeshForDevices(devices)) o.mesh = *mesh;
  switch (kind) {
    case ModelKind::kDeepseek:
      o.layers = static_cast<int>(size);
      break;
    case ModelKind::kGeneric:
      o.params = size;
      o.owners_fraction = 1.0;
      o.owner_style = OwnerStyle::kMixed;
      break;
    case ModelKind::kShared:
      o.paths = static_cast<int>(size);
      o.blocks = 16;
      break;
  }
  return o;
}

std::unique_ptr<Model> BuildModel(const Key& key) {
  auto m = std::make_unique<Model>();
  const auto [kind, size, devices] = key;
  m->json = GenerateDocument(OptionsFor(kind, size, devices));
  if (m->json.empty()) {
    m->error = "generator refused the options";
    return m;
  }
  ParseResult parsed = ParseDocument(m->json, Limits{});
  if (parsed.error) {
    m->error = "generated document is invalid: " + parsed.error->message;
    return m;
  }
  m->doc = std::move(parsed.document);
  m->tree = std::make_unique<ModuleTree>(*m->doc);
  m->paths = static_cast<int64_t>(m->tree->size());
  for (PathId p = 0; p < m->tree->size(); ++p) {
    m->param_paths += static_cast<int64_t>(m->doc->modules[m->tree->module(p)].params.size());
  }
  m->plan_entries = m->doc->plan ? static_cast<int64_t>(m->doc->plan->size()) : 0;

  DiagnosticSink sink;
  m->collected = std::make_unique<Owners>(m->doc->modules.size());
  m->all_added = CollectOwners(*m->tree, *m->collected, sink);
  m->claimed = std::make_unique<Owners>(m->doc->modules.size());
  CollectOwners(*m->tree, *m->claimed, sink);
  CheckNesting(*m->tree, *m->claimed, sink);
  CheckOwners(*m->tree, *m->claimed, sink);
  m->claims = std::make_unique<Claims>(AssignParameters(*m->tree, *m->claimed, m->all_added, sink));
  if (sink.has_errors()) {
    std::vector<Diagnostic> d = sink.Take();
    m->error = "generated document does not check: " + d.front().code + ": " + d.front().message;
    return m;
  }
  m->owners = static_cast<int64_t>(m->collected->InOrder().size());
  return m;
}

// Models above this size are dropped when another model is built.
constexpr size_t kKeepBytes = 64u << 20;

const Model& GetModel(ModelKind kind, int64_t size, int64_t devices) {
  static auto* cache = new std::map<Key, std::unique_ptr<Model>>();
  const Key key{kind, size, devices};
  auto it = cache->find(key);
  if (it != cache->end()) return *it->second;
  for (auto i = cache->begin(); i != cache->end();) {
    i = i->second->json.size() > kKeepBytes ? cache->erase(i) : std::next(i);
  }
  return *cache->emplace(key, BuildModel(key)).first->second;
}

// The model of this benchmark's arguments, or null after SkipWithError.
const Model* ModelOrSkip(benchmark::State& state, ModelKind kind) {
  const Model& m = GetModel(kind, state.range(0), state.range(1));
  if (!m.error.empty()) {
    state.SkipWithError(m.error.c_str());
    return nullptr;
  }
  state.counters["paths"] = static_cast<double>(m.paths);
  state.counters["owners"] = static_cast<double>(m.owners);
  return &m;
}

// Counts the minor page faults of the process (all threads) in the timed
// loop, and reports them per iteration as `page_faults`: what fresh memory
// a phase takes (docs/performance.md, section 1, gives the cost of a fault
// on the machine measured).
class PageFaults {
 public:
  PageFaults() : since_(Now()) {}
  void Pause() { counted_ += Now() - since_; }
  void Resume() { since_ = Now(); }
  void Report(benchmark::State& state) {
    Pause();
    state.counters["page_faults"] = benchmark::Counter(static_cast<double>(counted_), benchmark::Counter::kAvgIterations);
  }

 private:
  static int64_t Now() {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  }
  int64_t since_;
  int64_t counted_ = 0;
};

void SetItems(benchmark::State& state, int64_t per_iteration) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * per_iteration);
}

// --- benchmarks ---------------------------------------------------------------

// ParseDocument: JSON text -> Document (RapidJSON DOM, strict walk, interning,
// cycle and path-limit checks). Items: module paths.
void BM_Parse(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  PageFaults faults;
  for (auto _ : state) {
    ParseResult parsed = ParseDocument(m->json, Limits{});
    if (parsed.error) {
      state.SkipWithError(parsed.error->message.c_str());
      break;
    }
    benchmark::DoNotOptimize(parsed.document.get());
  }
  faults.Report(state);
  SetItems(state, m->paths);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m->json.size()));
}

// ModuleTree: expands every module path (pre-order ids, FQN arena, child and
// parameter indexes). Items: module paths.
void BM_BuildTree(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  PageFaults faults;
  for (auto _ : state) {
    ModuleTree tree(*m->doc);
    benchmark::DoNotOptimize(tree.size());
  }
  faults.Report(state);
  SetItems(state, m->paths);
}

// CollectOwners: model providers (FQN resolution), families, native requests
// (glob matching over every FQN, family-subtree marks). Items: module paths.
void BM_Collect(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  PageFaults faults;
  for (auto _ : state) {
    Owners owners(m->doc->modules.size());
    DiagnosticSink sink;
    const bool all_added = CollectOwners(*m->tree, owners, sink);
    benchmark::DoNotOptimize(all_added);
    if (sink.has_errors()) {
      state.SkipWithError("CollectOwners reported diagnostics");
      break;
    }
  }
  faults.Report(state);
  SetItems(state, m->paths);
}

// CheckNesting: overlapping communicating owners (ancestor walk per
// communicating owner). Items: owners.
void BM_Nesting(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  PageFaults faults;
  for (auto _ : state) {
    DiagnosticSink sink;
    CheckNesting(*m->tree, *m->collected, sink);
    if (sink.has_errors()) {
      state.SkipWithError("CheckNesting reported diagnostics");
      break;
    }
  }
  faults.Report(state);
  SetItems(state, m->owners);
}

// CheckOwners: ports, placements (every axis of every named placement) and
// parallel axes of every owner. Items: owners.
void BM_OwnerChecks(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  PageFaults faults;
  for (auto _ : state) {
    DiagnosticSink sink;
    CheckOwners(*m->tree, *m->collected, sink);
    if (sink.has_errors()) {
      state.SkipWithError("CheckOwners reported diagnostics");
      break;
    }
  }
  faults.Report(state);
  SetItems(state, m->owners);
}

// AssignParameters: claims, ties, aliases, omissions, owned names. It
// consumes its Owners (records what it made of their params), so every
// iteration gets freshly collected owners; collecting them (and destroying
// the previous ones) happens with the timer paused. Timed: the call and the
// destruction of its Claims. Items: parameter paths.
void BM_Claims(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  std::unique_ptr<Owners> owners;
  PageFaults faults;
  for (auto _ : state) {
    state.PauseTiming();
    faults.Pause();
    owners.reset();
    owners = std::make_unique<Owners>(m->doc->modules.size());
    DiagnosticSink collect_sink;
    CollectOwners(*m->tree, *owners, collect_sink);
    DiagnosticSink sink;
    faults.Resume();
    state.ResumeTiming();
    Claims claims = AssignParameters(*m->tree, *owners, m->all_added, sink);
    benchmark::DoNotOptimize(claims);
    if (sink.has_errors()) {
      state.SkipWithError("AssignParameters reported diagnostics");
      break;
    }
  }
  faults.Report(state);
  SetItems(state, m->param_paths);
  state.counters["param_paths"] = static_cast<double>(m->param_paths);
}

// ValidatePlan: the final plan (one entry per owner) against the claimed
// owners: per-parameter declarations, required parameters, ports and
// placements of every owned entry, coverage. Items: plan entries.
void BM_PlanCheck(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  if (!m->doc->plan) {
    state.SkipWithError("the document has no plan");
    return;
  }
  PageFaults faults;
  for (auto _ : state) {
    DiagnosticSink sink;
    ValidatePlan(*m->tree, *m->claimed, *m->claims, *m->doc->plan, sink);
    if (sink.has_errors()) {
      state.SkipWithError("ValidatePlan reported diagnostics");
      break;
    }
  }
  faults.Report(state);
  SetItems(state, m->plan_entries);
}

// Check + ResultToJson: the whole engine from text to result text, as the CLI
// runs it (without file I/O). Items: module paths; bytes: input text.
void BM_EndToEnd(benchmark::State& state, ModelKind kind) {
  const Model* m = ModelOrSkip(state, kind);
  if (m == nullptr) return;
  size_t out_bytes = 0;
  PageFaults faults;
  for (auto _ : state) {
    absl::StatusOr<Result> r = Check(m->json, CheckOptions{});
    if (!r.ok() || !r->ok) {
      state.SkipWithError(!r.ok() ? "Check failed" : "the document did not check ok");
      break;
    }
    std::string out = ResultToJson(*r);
    out_bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  faults.Report(state);
  SetItems(state, m->paths);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m->json.size()));
  state.counters["result_bytes"] = static_cast<double>(out_bytes);
}

// A DeepSeek-V3-sized document without a final plan, plus one tp template
// of `rules` literal rules as generated plans spell them, one per expert of
// consecutive layers from layer 3: "layers.3.mlp.experts.17.gate_proj":
// "colwise" (bench/literal_templates.py writes the same for the CLI). The
// experts keep their native owner, so every rule is the warning
// template-skipped-owned.
const std::string& LiteralTemplatesDocument(int64_t rules) {
  static auto* cache = new std::map<int64_t, std::string>();
  auto it = cache->find(rules);
  if (it != cache->end()) return it->second;
  GenOptions o;
  o.kind = ModelKind::kDeepseek;
  std::string json = GenerateDocument(o);
  if (!json.empty() && json.back() == '}') {
    constexpr int64_t kExperts = 256;
    json.pop_back();
    json += R"J(,"templates":[{"axis":"tp","rules":{)J";
    for (int64_t r = 0; r < rules; ++r) {
      json += (r == 0 ? "\"layers." : ",\"layers.") + std::to_string(3 + r / kExperts) + ".mlp.experts." +
              std::to_string(r % kExperts) + R"J(.gate_proj":"colwise")J";
    }
    json += "}}]}";
  }
  return cache->emplace(rules, std::move(json)).first->second;
}

// Plan (or Check, for comparison) of that document, from text to Result:
// planning tests each path against the rules that can match it, so the
// rules should cost little next to planning the same document without them
// (rules:0), not paths x rules. The result's JSON is left out: a plan's is
// several times a check's whatever its templates. Items: template rules.
void BM_LiteralTemplates(benchmark::State& state, bool plan) {
  const std::string& json = LiteralTemplatesDocument(state.range(0));
  PageFaults faults;
  for (auto _ : state) {
    absl::StatusOr<Result> r = plan ? Plan(json, CheckOptions{}) : Check(json, CheckOptions{});
    if (!r.ok() || !r->ok) {
      state.SkipWithError(!r.ok() ? "the engine failed" : "the document has errors");
      break;
    }
    benchmark::DoNotOptimize(r->diagnostics.data());
  }
  faults.Report(state);
  SetItems(state, state.range(0));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(json.size()));
}

// The DeepSeek-V3-sized document without a final plan (default mesh), with
// or without a `training` section: ZeRO-3 over dp with FSDP units on the
// decoder layers, a frozen embedding, a master copy, activations from
// DeepSeek-V3's model description, and 80 GiB devices, which it exceeds, so
// the verdict's alternatives are computed too (training-v1).
const std::string& TrainingDocument(bool training) {
  static auto* cache = new std::map<bool, std::string>();
  auto it = cache->find(training);
  if (it != cache->end()) return it->second;
  GenOptions o;
  o.kind = ModelKind::kDeepseek;
  std::string json = GenerateDocument(o);
  if (training && !json.empty() && json.back() == '}') {
    json.pop_back();
    json += R"J(,"training":{"zero":3,"shard_axes":["dp"],"master_dtype":"float32","fsdp_units":["layers.*"],)J"
            R"J("frozen":["embed_tokens.weight"],"activations":{"seq_len":4096,"recompute":"selective"},)J"
            R"J("model":{"hidden_size":7168,"num_attention_heads":128,"head_dim":192,"intermediate_size":18432,)J"
            R"J("num_hidden_layers":61,"vocab_size":129280,"num_experts":256,"num_experts_per_tok":8,)J"
            R"J("moe_intermediate_size":2048,"num_shared_experts":1,"first_k_dense_replace":3},)J"
            R"J("device_memory":"80GiB"}})J";
  }
  return cache->emplace(training, std::move(json)).first->second;
}

// Plan of that document, from text to Result: the training memory should
// add at most 30% to planning without it (issue 39). Items: module paths
// are not known here; bytes: input text.
void BM_Training(benchmark::State& state) {
  const bool training = state.range(0) != 0;
  const std::string& json = TrainingDocument(training);
  PageFaults faults;
  for (auto _ : state) {
    absl::StatusOr<Result> r = Plan(json, CheckOptions{});
    // With training the verdict is an error (exceeds-device-memory).
    if (!r.ok() || r->diagnostics.empty() != !training) {
      state.SkipWithError("the engine failed, or the verdict is not the expected one");
      break;
    }
    benchmark::DoNotOptimize(r->diagnostics.data());
  }
  faults.Report(state);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(json.size()));
}

// --- registration ---------------------------------------------------------------

using BenchFn = void (*)(benchmark::State&, ModelKind);
struct Phase {
  const char* name;
  BenchFn fn;
};
constexpr Phase kPhases[] = {
    {"BM_Parse", BM_Parse},         {"BM_BuildTree", BM_BuildTree}, {"BM_Collect", BM_Collect},
    {"BM_Nesting", BM_Nesting},     {"BM_OwnerChecks", BM_OwnerChecks}, {"BM_Claims", BM_Claims},
    {"BM_PlanCheck", BM_PlanCheck}, {"BM_EndToEnd", BM_EndToEnd},
};

constexpr int64_t kDefaultDevices = 64;  // {"dp": 8, "tp": 8}
constexpr int64_t kMeshes[] = {8, 64, 512, 4096, 32768};

void Register(const Phase& phase, ModelKind kind, const char* kind_name, const char* size_name, int64_t size,
              int64_t devices) {
  benchmark::RegisterBenchmark((std::string(phase.name) + "/" + kind_name).c_str(), phase.fn, kind)
      ->Args({size, devices})
      ->ArgNames({size_name, "devices"})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

int RegisterAll() {
  // Generic models, size by size: every phase, default mesh; at 100k
  // parameters the per-owner checks over every mesh as well.
  for (int64_t params : {1'000, 10'000, 100'000, 1'000'000}) {
    for (const Phase& phase : kPhases) {
      Register(phase, ModelKind::kGeneric, "generic", "params", params, kDefaultDevices);
    }
    if (params == 100'000) {
      for (const char* name : {"BM_OwnerChecks", "BM_PlanCheck"}) {
        for (int64_t devices : kMeshes) {
          if (devices == kDefaultDevices) continue;  // registered above
          for (const Phase& phase : kPhases) {
            if (std::string(phase.name) == name) {
              Register(phase, ModelKind::kGeneric, "generic", "params", params, devices);
            }
          }
        }
      }
    }
  }
  // Heavy module sharing: 16 blocks over 4096 slots (49k paths, 32k
  // parameter names, most of them aliases).
  for (const Phase& phase : kPhases) Register(phase, ModelKind::kShared, "shared", "paths", 4096, kDefaultDevices);
  // DeepSeek-V3-like: 61 layers x 256 experts on {"dp": 8, "ep": 8, "tp": 8}.
  for (const Phase& phase : kPhases) Register(phase, ModelKind::kDeepseek, "deepseek", "layers", 61, 512);
  // The same model (default mesh, no final plan) with 5,120 literal
  // template rules, checked and planned; with none, for comparison.
  for (const bool plan : {false, true}) {
    benchmark::RegisterBenchmark(plan ? "BM_LiteralTemplates/plan/deepseek" : "BM_LiteralTemplates/check/deepseek",
                                 BM_LiteralTemplates, plan)
        ->Arg(0)
        ->Arg(5120)
        ->ArgName("rules")
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  // The same model planned without and with a training section.
  benchmark::RegisterBenchmark("BM_Training/plan/deepseek", BM_Training)
      ->Arg(0)
      ->Arg(1)
      ->ArgName("training")
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  return 0;
}

[[maybe_unused]] const int kRegistered = RegisterAll();

// Memory a timed loop frees stays in the heap for its next iteration, as
// in a long-lived process: glibc would otherwise map blocks above a
// threshold it moves with the history of frees, and give the heap's top
// back, so whether an iteration paid for fresh pages changed from run to
// run. Blocks up to 32 MiB (glibc's
// largest threshold) come from the heap, which is never trimmed;
// `page_faults` counts whatever fresh memory a phase still takes.
[[maybe_unused]] const bool kHeapKept = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;

}  // namespace
}  // namespace shardplan::bench

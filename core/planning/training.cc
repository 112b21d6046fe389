#include "core/planning/training.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/diagnostics/codes.h"
#include "core/model/activations.h"
#include "core/model/training.h"
#include "core/planning/memory.h"
#include "core/planning/templates.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

// What the alternatives of the verdict change: the ZeRO stage, the axes it
// shards over (mesh indexes) and the recomputation.
struct Setting {
  int zero = 0;
  std::vector<uint32_t> shard_axes;
  Recompute recompute = Recompute::kSelective;
};

// One parameter identity of known, non-empty shape, as the training model
// reads it.
struct Param {
  const Parameter* param;
  const NamedPlacements* placements;  // nullptr: replicated
  PlanSharding::Dims dims;            // the dims the plan shards
  uint64_t dtype = 0;                 // element sizes
  uint64_t grad = 0;
  bool trained = false;
  uint32_t unit = 0;  // its FSDP unit (0: the root unit)
};

class TrainingModel {
 public:
  TrainingModel(const Document& doc, const Training& training, const DeviceGrid& grid, std::vector<Param> params,
                uint32_t units)
      : doc_(doc), training_(training), grid_(grid), params_(std::move(params)), units_(units) {}

  // The breakdown of `device` under `s` (activations included).
  TrainingBreakdown At(uint64_t device, const Setting& s) const;
  // Every device class's total under `s`, with the classes.
  struct Totals {
    DeviceClasses classes;
    std::vector<uint64_t> per_class;
  };
  Totals TotalsOf(const Setting& s) const;
  // The largest total of any device under `s`.
  uint64_t WorstTotal(const Setting& s) const {
    const Totals totals = TotalsOf(s);
    return *std::max_element(totals.per_class.begin(), totals.per_class.end());
  }

 private:
  // W: the product of the sizes of the shard axes on which `p` is replicated.
  uint64_t ShardWays(const Param& p, const Setting& s) const;
  uint64_t Activations(const Setting& s) const;
  uint64_t MasterBytes() const { return training_.master_dtype ? DtypeBytes(*training_.master_dtype) : 0; }
  // Bytes per element kept whole (n) and kept as the padded shard (z), for
  // the model states of `p` under `s`.
  std::pair<uint64_t, uint64_t> StateBytes(const Param& p, const Setting& s) const;

  const Document& doc_;
  const Training& training_;
  const DeviceGrid& grid_;
  const std::vector<Param> params_;
  const uint32_t units_;
};

uint64_t TrainingModel::ShardWays(const Param& p, const Setting& s) const {
  uint64_t ways = 1;
  for (uint32_t axis : s.shard_axes) {
    bool replicated = true;
    if (p.placements != nullptr) {
      for (const AxisPlacement& ap : *p.placements) {
        if (ap.axis == doc_.mesh[axis].name) {
          replicated = ap.placement.kind == Placement::Kind::kReplicate;
          break;
        }
      }
    }
    if (replicated) ways *= grid_.size[axis];
  }
  return ways;
}

uint64_t TrainingModel::Activations(const Setting& s) const {
  if (!training_.activations) return 0;
  ActivationSettings settings = *training_.activations;
  settings.recompute = s.recompute;
  uint64_t t = 1;
  if (settings.tensor_axis) {
    for (size_t j = 0; j < doc_.mesh.size(); ++j) {
      if (doc_.mesh[j].name == *settings.tensor_axis) t = grid_.size[j];
    }
  }
  // CompleteTraining refused sections whose activations overflow.
  return ActivationBytes(*training_.model, settings, t).value_or(0);
}

std::pair<uint64_t, uint64_t> TrainingModel::StateBytes(const Param& p, const Setting& s) const {
  uint64_t whole = 0, shard = 0;
  (s.zero == 3 ? shard : whole) += p.dtype;
  if (p.trained) {
    (s.zero >= 2 ? shard : whole) += p.grad;
    (s.zero >= 1 ? shard : whole) += MasterBytes() + OptimizerStates(training_.optimizer) *
                                                         DtypeBytes(training_.optimizer_dtype);
  }
  return {whole, shard};
}

TrainingBreakdown TrainingModel::At(uint64_t device, const Setting& s) const {
  TrainingBreakdown b;
  b.device = device;
  for (size_t j = 0; j < grid_.size.size(); ++j) b.coordinates.push_back(grid_.Coordinate(device, j));
  std::vector<uint64_t> unit_params(units_, 0), unit_grads(units_, 0);
  const uint64_t states = OptimizerStates(training_.optimizer);
  for (const Param& p : params_) {
    const SmallVector<int64_t>& shape = *p.param->shape;
    // The local shape: every sharded dim's units after torch.chunk over its
    // axes in mesh order.
    uint64_t n = 1, dim0 = 0;
    size_t next = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      uint64_t local = static_cast<uint64_t>(shape[d]);
      if (next < p.dims.size() && p.dims[next].first == d) {
        const ShardedDim& dim = p.dims[next++].second;
        uint64_t units = dim.units;
        for (uint32_t axis : dim.axes) units = ChunkUnits(units, grid_.size[axis], b.coordinates[axis]);
        local = units * dim.block;
      }
      if (d == 0) dim0 = local;
      n *= local;
    }
    const uint64_t ways = ShardWays(p, s);
    const uint64_t z = (ways > 1 && !shape.empty() && dim0 > 0) ? (dim0 + ways - 1) / ways * (n / dim0) : n;
    b.params += (s.zero == 3 ? z : n) * p.dtype;
    unit_params[p.unit] += n * p.dtype;
    if (p.trained) {
      b.grads += (s.zero >= 2 ? z : n) * p.grad;
      b.master += (s.zero >= 1 ? z : n) * MasterBytes();
      b.optimizer += states * (s.zero >= 1 ? z : n) * DtypeBytes(training_.optimizer_dtype);
      unit_grads[p.unit] += n * p.grad;
    }
  }
  if (s.zero == 3) {
    b.gathered = (1 + static_cast<uint64_t>(training_.prefetch)) *
                     *std::max_element(unit_params.begin(), unit_params.end()) +
                 *std::max_element(unit_grads.begin(), unit_grads.end());
  }
  b.activations = Activations(s);
  b.total = b.params + b.grads + b.master + b.optimizer + b.gathered + b.activations;
  return b;
}

TrainingModel::Totals TrainingModel::TotalsOf(const Setting& s) const {
  // The model states: per parameter, weight x (local elements) for what
  // is kept whole and weight x (padded shard) for what is sharded.
  DeviceSums states(grid_);
  absl::InlinedVector<ShardedDim, 2> dims;
  for (const Param& p : params_) {
    const SmallVector<int64_t>& shape = *p.param->shape;
    const auto [whole, shard] = StateBytes(p, s);
    const uint64_t ways = ShardWays(p, s);
    const uint64_t elements = Factors(*p.param, p.dims, dims);
    if (ways == 1 || shape.empty()) {
      states.Add(dims, (whole + shard) * elements);
      continue;
    }
    if (whole > 0) states.Add(dims, whole * elements);
    if (shard == 0) continue;
    if (!p.dims.empty() && p.dims[0].first == 0) {
      // Dim 0 is sharded by the plan too: its padded shard per device.
      dims[0].divisor = ways;
      states.Add(dims, shard * (elements / dims[0].block));
    } else {
      const uint64_t rows = static_cast<uint64_t>(shape[0]);
      states.Add(dims, shard * ((rows + ways - 1) / ways) * (elements / rows));
    }
  }
  // Per FSDP unit (zero 3), its gathered parameters and gradients on each
  // device; each device keeps the largest of each.
  const uint32_t units = s.zero == 3 ? units_ : 0;
  std::vector<DeviceSums> unit_params(units, DeviceSums(grid_)), unit_grads(units, DeviceSums(grid_));
  if (s.zero == 3) {
    for (const Param& p : params_) {
      const uint64_t elements = Factors(*p.param, p.dims, dims);
      unit_params[p.unit].Add(dims, elements * p.dtype);
      if (p.trained) unit_grads[p.unit].Add(dims, elements * p.grad);
    }
  }
  std::vector<const DeviceSums*> all = {&states};
  for (const std::vector<DeviceSums>* per_unit : {&unit_params, &unit_grads}) {
    for (const DeviceSums& sums : *per_unit) all.push_back(&sums);
  }
  Totals totals{DeviceClasses(grid_, all), {}};
  std::vector<uint64_t>& per_class = totals.per_class;
  per_class = states.Evaluate(totals.classes);
  if (s.zero == 3) {
    std::vector<uint64_t> max_params(per_class.size(), 0), max_grads(per_class.size(), 0);
    for (uint32_t u = 0; u < units; ++u) {
      for (auto [sums, max] : {std::pair{&unit_params[u], &max_params}, {&unit_grads[u], &max_grads}}) {
        if (sums->empty()) continue;
        const std::vector<uint64_t> values = sums->Evaluate(totals.classes);
        for (size_t c = 0; c < values.size(); ++c) (*max)[c] = std::max((*max)[c], values[c]);
      }
    }
    const uint64_t copies = 1 + static_cast<uint64_t>(training_.prefetch);
    for (size_t c = 0; c < per_class.size(); ++c) per_class[c] += copies * max_params[c] + max_grads[c];
  }
  const uint64_t activations = Activations(s);
  for (uint64_t& total : per_class) total += activations;
  return totals;
}

std::string Bytes(uint64_t bytes) {
  return absl::StrFormat("%.2f GiB (%d bytes)", static_cast<double>(bytes) / 1073741824.0, bytes);
}

std::string Gib(uint64_t bytes) { return absl::StrFormat("%.2f GiB", static_cast<double>(bytes) / 1073741824.0); }

// Whether `total` is more than headroom x device_memory, the product taken
// as a double and compared exactly.
bool AboveHeadroom(uint64_t total, const Training& training) {
  const double limit = training.headroom * static_cast<double>(*training.device_memory);
  return static_cast<long double>(total) > static_cast<long double>(limit);
}

// The patterns' FSDP units and frozen parameters, and the patterns that
// match nothing.
struct Matches {
  std::vector<bool> frozen;          // per parameter identity
  std::vector<uint32_t> unit;        // per parameter identity: its FSDP unit
  uint32_t units = 1;                // the root unit is 0
  std::vector<bool> frozen_used, fsdp_used;
};

Matches MatchPatterns(const ModuleTree& tree, const Training& training) {
  const Document& doc = tree.doc();
  Matches m;
  m.frozen.assign(doc.parameters.size(), false);
  m.unit.assign(doc.parameters.size(), 0);
  m.frozen_used.assign(training.frozen.size(), false);
  m.fsdp_used.assign(training.fsdp_units.size(), false);
  if (training.frozen.empty() && training.fsdp_units.empty()) return m;
  TemplateIndex frozen, fsdp;
  for (const TrainingPattern& p : training.frozen) frozen.Add("", p.pattern);
  for (const TrainingPattern& p : training.fsdp_units) fsdp.Add("", p.pattern);
  // unit_of[path]: the unit of the longest matching path from the root to
  // it; a parameter's unit is that of its first path in pre-order.
  std::vector<uint32_t> unit_of(tree.size(), 0);
  std::vector<bool> placed(doc.parameters.size(), false);
  for (PathId q = 0; q < tree.size(); ++q) {
    if (q != 0) {
      unit_of[q] = unit_of[tree.parent(q)];
      if (!training.fsdp_units.empty()) {
        const std::vector<uint32_t> rules = fsdp.Matching(tree.fqn(q));
        for (uint32_t r : rules) m.fsdp_used[r] = true;
        if (!rules.empty()) unit_of[q] = m.units++;
      }
    }
    for (const auto& [name, param] : tree.params(q)) {
      if (!placed[param]) {
        placed[param] = true;
        m.unit[param] = unit_of[q];
      }
      if (training.frozen.empty()) continue;
      const std::vector<uint32_t> rules = frozen.MatchingParameter(tree.fqn(q), doc.Name(name));
      for (uint32_t r : rules) m.frozen_used[r] = true;
      if (!rules.empty()) m.frozen[param] = true;
    }
  }
  return m;
}

}  // namespace

void CheckTraining(const ModuleTree& tree, const std::vector<const NamedPlacements*>& placement_of_param,
                   std::optional<MemoryReport>& memory, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const Training& training = *doc.training;
  Matches matches = MatchPatterns(tree, training);
  for (auto [patterns, used, key, what] :
       {std::tuple{&training.frozen, &matches.frozen_used, "frozen", "parameter"},
        {&training.fsdp_units, &matches.fsdp_used, "fsdp_units", "module"}}) {
    for (size_t i = 0; i < patterns->size(); ++i) {
      if (!(*used)[i]) {
        sink.Report(Code::kTrainingPatternNoMatch, {.pointer = (*patterns)[i].pointer}, key, (*patterns)[i].pattern,
                    what);
      }
    }
  }
  if (!memory) return;
  const std::optional<DeviceGrid> grid = DeviceGrid::Of(doc, kMaxMemoryDevices);
  const PlanSharding sharding(doc, *grid);
  std::vector<Param> params;
  for (size_t id = 0; id < doc.parameters.size(); ++id) {
    const Parameter& param = doc.parameters[id];
    if (!param.shape || TensorBytes(*param.shape, param.dtype) == uint64_t{0}) continue;
    Param& p = params.emplace_back();
    p.param = &param;
    p.placements = id < placement_of_param.size() ? placement_of_param[id] : nullptr;
    sharding.Shards(param, p.placements, p.dims);
    p.dtype = DtypeBytes(param.dtype);
    p.grad = DtypeBytes(training.grad_dtype.value_or(param.dtype));
    p.trained = training.optimizer != Optimizer::kNone && !matches.frozen[id];
    p.unit = matches.unit[id];
  }
  const TrainingModel model(doc, training, *grid, std::move(params), matches.units);
  Setting setting;
  setting.zero = training.zero;
  for (NameId axis : training.shard_axes) setting.shard_axes.push_back(*sharding.AxisIndex(axis));
  if (training.activations) setting.recompute = training.activations->recompute;

  const TrainingModel::Totals totals = model.TotalsOf(setting);
  MemoryReport summary = Summarize(totals.classes, totals.per_class, 0);
  TrainingReport& report = memory->training.emplace();
  report.worst = model.At(summary.max_device, setting);
  report.max_total_bytes = summary.max_bytes;
  report.min_total_bytes = summary.min_bytes;
  report.mean_total_bytes = summary.mean_bytes;
  report.per_device_total_bytes = std::move(summary.per_device_bytes);

  if (!training.device_memory) return;
  const uint64_t budget = *training.device_memory;
  const uint64_t worst = report.worst.total;
  const bool exceeds = worst > budget;
  if (!exceeds && !AboveHeadroom(worst, training)) return;
  const auto fits = [&](uint64_t total) { return exceeds ? total <= budget : !AboveHeadroom(total, training); };

  // The single changes that would fit, in the spec's order.
  std::vector<std::string> alternatives;
  for (int zero = setting.zero + 1; zero <= 3; ++zero) {
    Setting s = setting;
    s.zero = zero;
    if (const uint64_t total = model.WorstTotal(s); fits(total)) {
      alternatives.push_back(absl::StrCat("zero ", zero, " (", Gib(total), ")"));
      break;
    }
  }
  for (uint32_t axis = 0; axis < doc.mesh.size(); ++axis) {
    if (std::find(setting.shard_axes.begin(), setting.shard_axes.end(), axis) != setting.shard_axes.end()) continue;
    Setting s = setting;
    s.shard_axes.push_back(axis);
    if (const uint64_t total = model.WorstTotal(s); fits(total)) {
      std::vector<std::string_view> names;
      for (uint32_t a : s.shard_axes) names.push_back(doc.Name(doc.mesh[a].name));
      alternatives.push_back(absl::StrCat("shard_axes ", PyReprList(names), " (", Gib(total), ")"));
      break;
    }
  }
  if (training.activations && setting.recompute != Recompute::kFull) {
    Setting s = setting;
    s.recompute = Recompute::kFull;
    if (const uint64_t total = model.WorstTotal(s); fits(total)) {
      alternatives.push_back(absl::StrCat("recompute 'full' (", Gib(total), ")"));
    }
  }
  const std::string tail = alternatives.empty()
                               ? std::string("no higher zero stage, added shard axis or full recompute makes it fit")
                               : absl::StrCat("it would fit with: ", absl::StrJoin(alternatives, ", "));
  std::string device = absl::StrCat("device ", report.worst.device);
  if (!doc.mesh.empty()) {
    std::vector<std::string> coordinates;
    for (size_t j = 0; j < doc.mesh.size(); ++j) {
      coordinates.push_back(absl::StrCat(doc.Name(doc.mesh[j].name), "=", report.worst.coordinates[j]));
    }
    absl::StrAppend(&device, " (", absl::StrJoin(coordinates, ", "), ")");
  }
  const Where where{.pointer = "/training/device_memory"};
  if (exceeds) {
    sink.Report(Code::kExceedsDeviceMemory, where, device, Bytes(worst), Bytes(budget), tail);
  } else {
    sink.Report(Code::kNearDeviceMemory, where, device, Bytes(worst),
                absl::StrCat("headroom ", absl::StrFormat("%g", training.headroom), " x device_memory ", Bytes(budget)),
                tail);
  }
}

}  // namespace shardplan

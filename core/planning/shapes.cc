#include "core/planning/shapes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/diagnostics/fixes.h"
#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/text/json_pointer.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();
// The uneven-shard message lists at most this many shard counts...
constexpr size_t kListedDivisors = 8;
// ...searching at most this many candidates (axis sizes are small in
// practice; a hostile 2^62-device axis must not stall the check).
constexpr uint64_t kDivisorCandidates = uint64_t{1} << 20;

uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

struct ShardingAxis {
  size_t mesh_index;
  const AxisPlacement* placement;
};

// "16 devices (tp=16)", "16 devices (dp=2 x tp=8)".
std::string DevicesText(const Document& doc, uint64_t count, const std::vector<size_t>& axes) {
  std::vector<std::string> parts;
  for (size_t j : axes) parts.push_back(absl::StrCat(doc.Name(doc.mesh[j].name), "=", doc.mesh[j].size));
  const std::string total = count == kSaturated ? "2^64 or more" : absl::StrCat(count);
  return absl::StrCat(total, " devices (", absl::StrJoin(parts, " x "), ")");
}

// "dim 0 has size 10", "dim 0 has 8 units (blocks of 128)", plus the fused
// parts: "dim 0 has size 12 (2 fused parts)".
std::string DimText(int64_t dim, uint64_t units, uint64_t block, int64_t fused) {
  std::string text = block == 1 ? absl::StrCat("dim ", dim, " has size ", units)
                                : absl::StrCat("dim ", dim, " has ", units, " units (blocks of ", block, ")");
  if (fused > 1) absl::StrAppend(&text, " (", fused, " fused parts)");
  return text;
}

// The shard counts c in [2, shards) that split `units` evenly (units a
// multiple of fused x c), ascending: all of them, or the largest
// kListedDivisors with `more` set. `complete` is false when a hostile axis
// size stopped the search early (the counts are then the largest found).
struct EvenCounts {
  std::vector<uint64_t> counts;
  bool more = false;
  bool complete = true;
};
EvenCounts EvenShardCounts(uint64_t units, uint64_t fused, uint64_t shards) {
  EvenCounts out;
  if (units % fused != 0) return out;
  const uint64_t whole = units / fused;  // c must divide this
  std::vector<uint64_t> found;
  if (shards - 1 <= kDivisorCandidates) {
    for (uint64_t c = std::min(shards - 1, whole); c >= 2; --c) {
      if (whole % c == 0) found.push_back(c);
    }
  } else if (whole / kDivisorCandidates <= kDivisorCandidates) {
    // whole < 2^40: its divisors pair up around sqrt(whole) < 2^20.
    for (uint64_t i = 1; i * i <= whole; ++i) {
      if (whole % i != 0) continue;
      for (uint64_t c : {i, whole / i}) {
        if (c >= 2 && c < shards) found.push_back(c);
      }
    }
    std::sort(found.begin(), found.end(), std::greater<>());
    found.erase(std::unique(found.begin(), found.end()), found.end());
  } else {
    uint64_t c = std::min(shards - 1, whole);
    for (uint64_t tried = 0; c >= 2 && tried < kDivisorCandidates; --c, ++tried) {
      if (whole % c == 0) found.push_back(c);
    }
    out.complete = c < 2;
  }
  if (found.size() > kListedDivisors) {
    found.resize(kListedDivisors);
    out.more = true;
  }
  out.counts.assign(found.rbegin(), found.rend());
  return out;
}

// One sharded dim of a declaration: it splits evenly when its `units` are
// at least its shard count (the product of the sizes of mesh axes `axes`,
// in mesh order) and a multiple of `fused` x the shard count.
struct SplitRule {
  uint64_t units = 0;
  uint64_t fused = 1;
  std::vector<size_t> axes;

  uint64_t Shards(const std::vector<uint64_t>& sizes) const {
    uint64_t shards = 1;
    for (size_t j : axes) shards = SatMul(shards, sizes[j]);
    return shards;
  }
  bool Holds(const std::vector<uint64_t>& sizes) const {
    const uint64_t shards = Shards(sizes);
    return units >= shards && units % SatMul(fused, shards) == 0;
  }
  friend bool operator==(const SplitRule&, const SplitRule&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const SplitRule& r) {
    return H::combine(std::move(h), r.units, r.fused, r.axes);
  }
};

struct ShardedDim {
  int64_t dim;
  uint64_t block;
  SplitRule rule;
};

// The dims `decl` shards, in increasing order; the S(d) placements naming a
// dim it does not have go to `out_of_range`.
std::vector<ShardedDim> ShardedDims(const Document& doc, const absl::flat_hash_map<NameId, size_t>& axis_index,
                                    const ParamDeclaration& decl, std::vector<const AxisPlacement*>* out_of_range) {
  const Parameter& param = doc.parameters[decl.param];
  const SmallVector<int64_t>& shape = *param.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  // The shard placements on mesh axes, in mesh order.
  absl::InlinedVector<ShardingAxis, 4> sharding;
  for (const AxisPlacement& ap : *decl.placements) {
    if (ap.placement.kind != Placement::Kind::kShard) continue;
    const auto it = axis_index.find(ap.axis);
    if (it != axis_index.end()) sharding.push_back({it->second, &ap});
  }
  std::sort(sharding.begin(), sharding.end(),
            [](const ShardingAxis& a, const ShardingAxis& b) { return a.mesh_index < b.mesh_index; });

  // Mesh axes by the dim they shard (in range only).
  std::vector<std::vector<size_t>> axes_of_dim(shape.size());
  for (const ShardingAxis& s : sharding) {
    const int32_t dim = s.placement->placement.dim;
    const int64_t d = dim < 0 ? dim + rank : dim;
    if (d >= 0 && d < rank) {
      axes_of_dim[d].push_back(s.mesh_index);
    } else if (out_of_range != nullptr) {
      out_of_range->push_back(s.placement);
    }
  }
  int64_t fused_dim = -1;
  if (decl.fused_parts > 1) {
    const int64_t d = decl.fused_dim < 0 ? decl.fused_dim + rank : decl.fused_dim;
    if (d >= 0 && d < rank) fused_dim = d;
  }
  std::vector<ShardedDim> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (axes_of_dim[d].empty()) continue;
    const uint64_t block = param.blocks.empty() ? 1 : static_cast<uint64_t>(param.blocks[d]);
    dims.push_back({d, block,
                    {.units = static_cast<uint64_t>(shape[d]) / block,
                     .fused = d == fused_dim ? static_cast<uint64_t>(decl.fused_parts) : 1,
                     .axes = std::move(axes_of_dim[d])}});
  }
  return dims;
}

// Whether `d`, one of `failing` dims of its declaration that do not split
// evenly under `sizes`, is one padding would fix were it a vocabulary: dim
// 0, uneven but not empty, the only such dim.
bool PaddableDim(const ShardedDim& d, size_t failing, const std::vector<uint64_t>& sizes) {
  const uint64_t shards = d.rule.Shards(sizes);
  return d.dim == 0 && failing == 1 && !d.rule.Holds(sizes) && d.rule.units >= shards &&
         SatMul(d.rule.fused, shards) != kSaturated;
}

// The parameters of embedding modules (type "...Embedding"): their dim 0
// is a vocabulary, which models pad to a multiple of the shard count.
absl::flat_hash_set<ParamId> VocabularyParams(const Document& doc) {
  absl::flat_hash_set<ParamId> out;
  for (const Module& m : doc.modules) {
    if (m.type == kNoName || !doc.Name(m.type).ends_with("Embedding")) continue;
    for (const auto& [name, param] : m.params) out.insert(param);
  }
  return out;
}

// Limits of EvenMesh's search: meshes of at most this many devices and
// axes, at most this many candidate meshes.
constexpr uint64_t kMaxMeshDevices = uint64_t{1} << 32;
constexpr size_t kMaxMeshAxes = 8;
constexpr size_t kMaxMeshCandidates = 100'000;

// A mesh of the same device count as `sizes` under which every rule holds,
// in which each axis of size > 1 keeps a size > 1 (a parallelism the plan
// uses is changed, not dropped): of those, the nearest to `sizes` (the
// fewest axes of size 1 grown, a parallelism the plan does not use yet;
// then the fewest axes changed, then the smallest sum of |log(new / old)|,
// then the first in lexicographic order). Nullopt when there is none or the search
// would be too large (more than kMaxMeshCandidates such factorizations of
// the devices, whether the rules hold or not).
//
// A depth-first search over the axes in order, trying each axis's sizes
// in increasing order (so meshes come in lexicographic order), that skips
// a branch when a rule whose axes are all fixed fails (a rule depends on
// its axes' sizes only), or when the distance so far is no smaller than
// the best mesh's (the three terms only grow as axes are fixed, and a tie
// goes to the mesh found first).
std::optional<std::vector<uint64_t>> EvenMesh(const std::vector<uint64_t>& sizes,
                                              const std::vector<const SplitRule*>& rules) {
  const size_t axes = sizes.size();
  uint64_t devices = 1;
  for (uint64_t s : sizes) devices = SatMul(devices, s);
  if (axes == 0 || axes > kMaxMeshAxes || devices > kMaxMeshDevices) return std::nullopt;
  std::vector<uint64_t> divisors;
  for (uint64_t i = 1; i * i <= devices; ++i) {
    if (devices % i != 0) continue;
    divisors.push_back(i);
    if (i != devices / i) divisors.push_back(devices / i);
  }
  std::sort(divisors.begin(), divisors.end());
  // Divisors go by index: 0 is 1, the last is `devices`. Per divisor, its
  // own divisors in increasing order, each with the quotient's index.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> factors(divisors.size());
  for (size_t i = 0; i < divisors.size(); ++i) {
    for (size_t k = 0; k <= i; ++k) {
      if (divisors[i] % divisors[k] != 0) continue;
      const auto quotient = std::lower_bound(divisors.begin(), divisors.end(), divisors[i] / divisors[k]);
      factors[i].emplace_back(static_cast<uint32_t>(k), static_cast<uint32_t>(quotient - divisors.begin()));
    }
  }
  // Whether axis `a` may take divisor `d`: an axis of size > 1 keeps a size
  // > 1.
  auto allowed = [&](size_t a, uint32_t d) { return sizes[a] == 1 || d != 0; };
  // completions[a][i]: the factorizations of divisor i over axes a.., at
  // most kMaxMeshCandidates + 1.
  std::vector<std::vector<uint64_t>> completions(axes + 1, std::vector<uint64_t>(divisors.size(), 0));
  completions[axes][0] = 1;
  for (size_t a = axes; a-- > 0;) {
    for (size_t i = 0; i < divisors.size(); ++i) {
      for (const auto& [d, quotient] : factors[i]) {
        if (!allowed(a, d)) continue;
        completions[a][i] = std::min<uint64_t>(completions[a][i] + completions[a + 1][quotient], kMaxMeshCandidates + 1);
      }
    }
  }
  if (completions[0][divisors.size() - 1] > kMaxMeshCandidates) return std::nullopt;

  std::vector<std::vector<const SplitRule*>> rules_at(axes);  // by each rule's last axis
  for (const SplitRule* r : rules) {
    if (r->axes.empty()) {
      if (!r->Holds(sizes)) return std::nullopt;  // no mesh changes it
    } else {
      rules_at[*std::max_element(r->axes.begin(), r->axes.end())].push_back(r);
    }
  }
  std::vector<double> log_divisor(divisors.size()), log_size(axes);
  for (size_t k = 0; k < divisors.size(); ++k) log_divisor[k] = std::log2(static_cast<double>(divisors[k]));
  for (size_t j = 0; j < axes; ++j) log_size[j] = std::log2(static_cast<double>(sizes[j]));

  using Distance = std::tuple<size_t, size_t, double>;  // axes grown, axes changed, log change
  std::vector<uint64_t> mesh(axes), best;
  std::optional<Distance> best_distance;
  // Fixes the axes from `axis` on, with divisor `left` of the devices left.
  auto search = [&](auto& self, size_t axis, uint32_t left, const Distance& distance) -> void {
    if (axis == axes) {
      best_distance = distance;
      best = mesh;
      return;
    }
    for (const auto& [d, quotient] : factors[left]) {
      if (!allowed(axis, d) || completions[axis + 1][quotient] == 0) continue;
      const auto& [grown, changed, log_change] = distance;
      const uint64_t size = divisors[d];
      const Distance next{grown + (sizes[axis] == 1 && size > 1 ? 1 : 0), changed + (size != sizes[axis] ? 1 : 0),
                          log_change + std::abs(log_divisor[d] - log_size[axis])};
      if (best_distance && !(next < *best_distance)) continue;
      mesh[axis] = size;
      const std::vector<const SplitRule*>& fixed = rules_at[axis];
      if (!std::all_of(fixed.begin(), fixed.end(), [&](const SplitRule* r) { return r->Holds(mesh); })) continue;
      self(self, axis + 1, quotient, next);
    }
  };
  search(search, 0, static_cast<uint32_t>(divisors.size() - 1), Distance{0, 0, 0.0});
  if (!best_distance) return std::nullopt;
  return best;
}

// The fix-it of every empty and uneven shard that EvenMesh's mesh removes:
// the mesh, and the replacement of each axis size it changes.
std::shared_ptr<const FixIt> MeshFixIt(const Document& doc, const std::vector<uint64_t>& sizes,
                                       const std::vector<uint64_t>& even) {
  uint64_t devices = 1;
  std::vector<std::string> axes;
  std::vector<FixOperation> fix;
  for (size_t j = 0; j < even.size(); ++j) {
    devices *= even[j];
    const std::string_view name = doc.Name(doc.mesh[j].name);
    axes.push_back(absl::StrCat(name, "=", even[j]));
    if (even[j] != sizes[j]) fix.push_back(ReplaceWithInteger(absl::StrCat("/mesh/", JsonPointerToken(name)), even[j]));
  }
  return MakeFixIt(absl::StrCat("with the same ", devices, " devices, the mesh ", absl::StrJoin(axes, ", "),
                                " splits every sharded dim evenly"),
                   std::move(fix));
}

// The fix-it of an uneven vocabulary: padding it to the next multiple.
std::shared_ptr<const FixIt> PaddingFixIt(const Document& doc, const ParamDeclaration& decl, const ShardedDim& dim,
                                          uint64_t needed) {
  const uint64_t padded = (dim.rule.units / needed + 1) * needed * dim.block;
  return MakeFixIt(absl::StrCat("pad the vocabulary (dim ", dim.dim, ") to ", padded, ", the next multiple of ",
                                needed * dim.block),
                   {ReplaceWithInteger(absl::StrCat("/parameters/", JsonPointerToken(doc.Name(doc.parameters[decl.param].id)),
                                                    "/shape/", dim.dim),
                                       padded)});
}

void CheckOne(const Document& doc, const absl::flat_hash_map<NameId, size_t>& axis_index,
              const std::vector<uint64_t>& sizes, const ParamDeclaration& decl, bool vocabulary,
              const std::shared_ptr<const FixIt>& mesh_fix, DiagnosticSink& sink) {
  const Parameter& param = doc.parameters[decl.param];
  const int64_t rank = static_cast<int64_t>(param.shape->size());
  const std::string full_name = FullName(decl.fqn, decl.local_name);
  const Where where{.fqn = decl.fqn, .parameter = full_name, .pointer = decl.pointer};

  std::vector<const AxisPlacement*> out_of_range;
  const std::vector<ShardedDim> dims = ShardedDims(doc, axis_index, decl, &out_of_range);
  for (const AxisPlacement* placement : out_of_range) {
    sink.Report(Code::kShardDimOutOfRange, where, full_name, FormatPlacement(placement->placement),
                doc.Name(placement->axis),
                rank == 0 ? std::string("it is a scalar (rank 0): it has no dim to shard")
                          : absl::StrCat("it has rank ", rank, ": dims are ", -rank, " to ", rank - 1));
  }
  const size_t failing =
      std::count_if(dims.begin(), dims.end(), [&](const ShardedDim& d) { return !d.rule.Holds(sizes); });
  for (const ShardedDim& sharded : dims) {
    const SplitRule& rule = sharded.rule;
    const uint64_t units = rule.units, fused = rule.fused, shards = rule.Shards(sizes);
    const uint64_t needed = SatMul(fused, shards);  // units must be a multiple of this
    const std::string dim_text = DimText(sharded.dim, units, sharded.block, static_cast<int64_t>(fused));
    const std::string devices = DevicesText(doc, shards, rule.axes);
    const std::string split = fused > 1 ? "each part is split over " : "is split over ";
    // Devices hold nothing only with fewer units than shards; fused parts
    // that do not split evenly are uneven (planner-v1 section 2).
    if (units < shards) {
      sink.Report(Code::kEmptyShard, Where{where.fqn, where.parameter, where.pointer, mesh_fix}, full_name, dim_text,
                  split, devices);
      continue;
    }
    if (units % needed == 0) continue;
    const std::string multiple = fused > 1 ? absl::StrCat(fused, " x ", shards, " = ", needed) : absl::StrCat(shards);
    std::string even_counts;
    if (shards > 2) {
      const EvenCounts even = EvenShardCounts(units, fused, shards);
      if (!even.counts.empty()) {
        even_counts = absl::StrCat(even.more || !even.complete ? "; the largest shard counts below " : "; shard counts below ",
                                   shards, " that divide it evenly: ", absl::StrJoin(even.counts, ", "));
      } else if (even.complete) {
        even_counts = absl::StrCat("; no shard count from 2 to ", shards - 1, " divides it evenly");
      }
    }
    const bool pad = vocabulary && PaddableDim(sharded, failing, sizes);
    sink.Report(Code::kUnevenShard,
                Where{where.fqn, where.parameter, where.pointer,
                      pad ? PaddingFixIt(doc, decl, sharded, needed) : mesh_fix},
                full_name, dim_text, split, devices, absl::StrCat(units), multiple, even_counts);
  }
}

}  // namespace

void CheckShapes(const Document& doc, const std::vector<ParamDeclaration>& declarations, DiagnosticSink& sink) {
  absl::flat_hash_map<NameId, size_t> axis_index;
  std::vector<uint64_t> sizes;
  for (size_t j = 0; j < doc.mesh.size(); ++j) {
    axis_index.emplace(doc.mesh[j].name, j);
    sizes.push_back(static_cast<uint64_t>(doc.mesh[j].size));
  }
  // The placements already checked per parameter: a parameter declared
  // alike in several entries (tied, or a shared module at several paths)
  // is reported once.
  absl::flat_hash_map<ParamId, absl::InlinedVector<const NamedPlacements*, 1>> checked;
  std::vector<const ParamDeclaration*> to_check;
  for (const ParamDeclaration& decl : declarations) {
    if (decl.placements == nullptr || decl.param >= doc.parameters.size()) continue;
    if (!doc.parameters[decl.param].shape) continue;
    auto& seen = checked[decl.param];
    if (std::any_of(seen.begin(), seen.end(),
                    [&](const NamedPlacements* p) { return SamePlacements(*p, *decl.placements); })) {
      continue;
    }
    seen.push_back(decl.placements);
    to_check.push_back(&decl);
  }

  // Every distinct rule; when one fails, a mesh under which all hold but
  // the vocabularies padding fixes (an uneven dim 0 of an embedding that
  // splits its other dims evenly).
  std::optional<absl::flat_hash_set<ParamId>> vocabulary;
  absl::flat_hash_set<SplitRule> distinct;
  bool failed = false;
  for (const ParamDeclaration* decl : to_check) {
    const std::vector<ShardedDim> dims = ShardedDims(doc, axis_index, *decl, nullptr);
    const size_t failing =
        std::count_if(dims.begin(), dims.end(), [&](const ShardedDim& d) { return !d.rule.Holds(sizes); });
    for (const ShardedDim& d : dims) {
      if (PaddableDim(d, failing, sizes)) {
        if (!vocabulary) vocabulary = VocabularyParams(doc);
        if (vocabulary->contains(decl->param)) continue;
      }
      failed = failed || !d.rule.Holds(sizes);
      distinct.insert(d.rule);
    }
  }
  std::shared_ptr<const FixIt> mesh_fix;
  if (failed) {
    const std::vector<const SplitRule*> rules = [&] {
      std::vector<const SplitRule*> out;
      for (const SplitRule& r : distinct) out.push_back(&r);
      return out;
    }();
    if (const std::optional<std::vector<uint64_t>> even = EvenMesh(sizes, rules)) {
      mesh_fix = MeshFixIt(doc, sizes, *even);
    }
  }
  for (const ParamDeclaration* decl : to_check) {
    CheckOne(doc, axis_index, sizes, *decl, vocabulary && vocabulary->contains(decl->param), mesh_fix, sink);
  }
}

}  // namespace shardplan

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
// would be too large.
std::optional<std::vector<uint64_t>> EvenMesh(const std::vector<uint64_t>& sizes,
                                              const std::vector<const SplitRule*>& rules) {
  uint64_t devices = 1;
  for (uint64_t s : sizes) devices = SatMul(devices, s);
  if (sizes.size() > kMaxMeshAxes || devices > kMaxMeshDevices) return std::nullopt;
  std::vector<uint64_t> divisors;
  for (uint64_t i = 1; i * i <= devices; ++i) {
    if (devices % i != 0) continue;
    divisors.push_back(i);
    if (i != devices / i) divisors.push_back(devices / i);
  }
  std::sort(divisors.begin(), divisors.end());
  // Every factorization, in lexicographic order.
  std::vector<std::vector<uint64_t>> candidates;
  std::vector<uint64_t> mesh(sizes.size());
  bool complete = true;
  const std::function<void(size_t, uint64_t)> factor = [&](size_t axis, uint64_t left) {
    if (!complete) return;
    const bool above_one = sizes[axis] > 1;
    if (axis + 1 == sizes.size()) {
      if (above_one && left == 1) return;
      mesh[axis] = left;
      if (candidates.size() == kMaxMeshCandidates) {
        complete = false;
        return;
      }
      candidates.push_back(mesh);
      return;
    }
    for (uint64_t d : divisors) {
      if (d > left) break;
      if (left % d != 0 || (above_one && d == 1)) continue;
      mesh[axis] = d;
      factor(axis + 1, left / d);
    }
  };
  if (!sizes.empty()) factor(0, devices);
  if (!complete) return std::nullopt;
  // (axes of size 1 grown, axes changed, log change, index): the order to
  // try them in.
  std::vector<std::tuple<size_t, size_t, double, size_t>> order;
  for (size_t i = 0; i < candidates.size(); ++i) {
    size_t grown = 0, changed = 0;
    double log_change = 0;
    for (size_t j = 0; j < sizes.size(); ++j) {
      grown += sizes[j] == 1 && candidates[i][j] > 1 ? 1 : 0;
      changed += candidates[i][j] != sizes[j] ? 1 : 0;
      log_change += std::abs(std::log2(static_cast<double>(candidates[i][j])) - std::log2(static_cast<double>(sizes[j])));
    }
    order.emplace_back(grown, changed, log_change, i);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [grown, changed, log_change, i] : order) {
    const std::vector<uint64_t>& m = candidates[i];
    if (std::all_of(rules.begin(), rules.end(), [&](const SplitRule* r) { return r->Holds(m); })) return m;
  }
  return std::nullopt;
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

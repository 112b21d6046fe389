#include "core/planning/shapes.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
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

void CheckOne(const Document& doc, const absl::flat_hash_map<NameId, size_t>& axis_index,
              const ParamDeclaration& decl, DiagnosticSink& sink) {
  const Parameter& param = doc.parameters[decl.param];
  const SmallVector<int64_t>& shape = *param.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  const std::string full_name = FullName(decl.fqn, decl.local_name);
  const Where where{.fqn = decl.fqn, .parameter = full_name, .pointer = decl.pointer};

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
      continue;
    }
    sink.Report(Code::kShardDimOutOfRange, where, full_name, FormatPlacement(s.placement->placement),
                doc.Name(s.placement->axis),
                rank == 0 ? std::string("it is a scalar (rank 0): it has no dim to shard")
                          : absl::StrCat("it has rank ", rank, ": dims are ", -rank, " to ", rank - 1));
  }

  int64_t fused_dim = -1;
  if (decl.fused_parts > 1) {
    const int64_t d = decl.fused_dim < 0 ? decl.fused_dim + rank : decl.fused_dim;
    if (d >= 0 && d < rank) fused_dim = d;
  }
  for (int64_t d = 0; d < rank; ++d) {
    const std::vector<size_t>& axes = axes_of_dim[d];
    if (axes.empty()) continue;
    uint64_t shards = 1;
    for (size_t j : axes) shards = SatMul(shards, static_cast<uint64_t>(doc.mesh[j].size));
    const uint64_t block = param.blocks.empty() ? 1 : static_cast<uint64_t>(param.blocks[d]);
    const uint64_t units = static_cast<uint64_t>(shape[d]) / block;
    const uint64_t fused = d == fused_dim ? static_cast<uint64_t>(decl.fused_parts) : 1;
    const uint64_t needed = SatMul(fused, shards);  // units must be a multiple of this
    const std::string dim_text = DimText(d, units, block, static_cast<int64_t>(fused));
    const std::string devices = DevicesText(doc, shards, axes);
    const std::string split = fused > 1 ? "each part is split over " : "is split over ";
    // Devices hold nothing only with fewer units than shards; fused parts
    // that do not split evenly are uneven (planner-v1 section 2).
    if (units < shards) {
      sink.Report(Code::kEmptyShard, where, full_name, dim_text, split, devices);
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
    sink.Report(Code::kUnevenShard, where, full_name, dim_text, split, devices, absl::StrCat(units), multiple,
                even_counts);
  }
}

}  // namespace

void CheckShapes(const Document& doc, const std::vector<ParamDeclaration>& declarations, DiagnosticSink& sink) {
  absl::flat_hash_map<NameId, size_t> axis_index;
  for (size_t j = 0; j < doc.mesh.size(); ++j) axis_index.emplace(doc.mesh[j].name, j);
  // The placements already checked per parameter: a parameter declared
  // alike in several entries (tied, or a shared module at several paths)
  // is reported once.
  absl::flat_hash_map<ParamId, absl::InlinedVector<const NamedPlacements*, 1>> checked;
  for (const ParamDeclaration& decl : declarations) {
    if (decl.placements == nullptr || decl.param >= doc.parameters.size()) continue;
    if (!doc.parameters[decl.param].shape) continue;
    auto& seen = checked[decl.param];
    if (std::any_of(seen.begin(), seen.end(),
                    [&](const NamedPlacements* p) { return SamePlacements(*p, *decl.placements); })) {
      continue;
    }
    seen.push_back(decl.placements);
    CheckOne(doc, axis_index, decl, sink);
  }
}

}  // namespace shardplan

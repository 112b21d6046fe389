// Placements of a tensor on one mesh axis, and named placements (axis ->
// placement) as the document and the result spell them:
//   S(d)   shard along tensor dim d (negative counts from the end)
//   R      replicate
//   P      partial sum; P(op) with op in sum|avg|max|min|prod (P(sum) == P)
#ifndef SHARDPLAN_CORE_MODEL_PLACEMENT_H_
#define SHARDPLAN_CORE_MODEL_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/model/interner.h"

namespace shardplan {

enum class PartialOp : uint8_t { kSum, kAvg, kMax, kMin, kProd };

struct Placement {
  enum class Kind : uint8_t { kShard, kReplicate, kPartial };
  Kind kind = Kind::kReplicate;
  PartialOp op = PartialOp::kSum;  // kPartial only
  int32_t dim = 0;                 // kShard only

  bool is_partial() const { return kind == Kind::kPartial; }
  friend bool operator==(const Placement& a, const Placement& b) {
    if (a.kind != b.kind) return false;
    if (a.kind == Kind::kShard) return a.dim == b.dim;
    if (a.kind == Kind::kPartial) return a.op == b.op;
    return true;
  }
  friend bool operator!=(const Placement& a, const Placement& b) { return !(a == b); }
};

// Parses the document spelling; nullopt for anything else.
std::optional<Placement> ParsePlacement(std::string_view text);
// The canonical spelling: "S(-1)", "R", "P", "P(max)".
std::string FormatPlacement(const Placement& placement);

struct AxisPlacement {
  NameId axis;
  Placement placement;
};

// Axis -> placement in document order; keys are unique (duplicate keys are
// refused when parsing). Meshes have a handful of axes: kept inline.
using NamedPlacements = absl::InlinedVector<AxisPlacement, 4>;

// Same keys and equal placements; key order is irrelevant.
bool SamePlacements(const NamedPlacements& a, const NamedPlacements& b);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_PLACEMENT_H_

// Parameter memory per device under a final plan (planner spec section 5).
//
// Devices are numbered row-major over the mesh axes in mesh order (the last
// axis varies fastest). Each parameter identity counts once, so tied
// parameters are counted once: the input is indexed by ParamId, not by name.
// On each mesh axis, in mesh order, whose placement is S(d), dim d of the
// current local shape (n units of b_d elements) is chunked with torch.chunk's
// rule: the device at coordinate c holds max(0, min(ceil(n/k), n - c*ceil(n/k)))
// units. Two axes sharding one dim therefore chunk it successively.
//
// Placements that shape nothing count as replicated: R, P / P(op) (a partial
// parameter is a full-size tensor on every device), an S(d) with d outside
// [-rank, rank) (the shape checks report it), and axes that are not mesh axes
// (the plan checks report them). Parameters of unknown shape count 0 bytes:
// nothing is known about them, and the report would otherwise be a guess.
//
// Cost: O(parameters + groups x (pieces of the chunking) + device classes x
// axes), never devices x parameters (device_sums.h): parameters that shard the
// same dims with the same unit counts over the same axes form one group
// whose bytes on a device are (sum of the group's weights) x (product of its
// local unit counts).
#ifndef SHARDPLAN_CORE_PLANNING_MEMORY_H_
#define SHARDPLAN_CORE_PLANNING_MEMORY_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/memory_report.h"
#include "core/model/document.h"
#include "core/model/placement.h"
#include "core/planning/device_sums.h"

namespace shardplan {

// How a plan shards parameters over a device grid (shared with training.h).
class PlanSharding {
 public:
  // (dim index, how it is sharded), in increasing dim order.
  using Dims = absl::InlinedVector<std::pair<uint32_t, ShardedDim>, 2>;

  PlanSharding(const Document& doc, const DeviceGrid& grid);
  // The mesh index of `axis`, or nullopt for a name that is no mesh axis.
  std::optional<uint32_t> AxisIndex(NameId axis) const;
  // The dims of `param` that `placements` shards: S(d) on mesh axes of size
  // > 1 with d in [-rank, rank); a dim of size n in blocks of b has n / b
  // units of b elements. Nothing for a parameter of unknown shape.
  void Shards(const Parameter& param, const NamedPlacements* placements, Dims& out) const;

 private:
  const DeviceGrid& grid_;
  absl::flat_hash_map<NameId, uint32_t> axis_index_;
};

// A parameter's local elements on a device, as the product of the factors
// of its sharded dims `dims` (copied into `sharded`, for DeviceSums) and the
// returned elements: its unsharded dims whole and its sharded dims' blocks.
// The parameter's shape is known.
uint64_t Factors(const Parameter& param, const PlanSharding::Dims& dims, absl::InlinedVector<ShardedDim, 2>& sharded);

// The report of the bytes `per_class` of each of `classes`.
MemoryReport Summarize(const DeviceClasses& classes, const std::vector<uint64_t>& per_class,
                       uint64_t unsharded_bytes);

// The memory each device holds for the parameters of `doc`.
// `placement_of_param[p]` is the placement the plan declares for parameter
// identity p, or nullptr for a replicated (undeclared) one; indexes past the
// vector's end are replicated too.
//
// Every figure is exact: the parser and the builder refuse parameters, and
// totals, of more than kMaxParameterBytes (document.h), so no device holds
// more than that; mean_bytes is the exact mean rounded to a double, never
// below min_bytes or above max_bytes. Returns std::nullopt when the mesh
// has more than kMaxMemoryDevices devices, or for a document beyond
// kMaxParameterBytes (which neither the parser nor the builder makes).
std::optional<MemoryReport> ComputeMemory(const Document& doc,
                                          const std::vector<const NamedPlacements*>& placement_of_param);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_MEMORY_H_

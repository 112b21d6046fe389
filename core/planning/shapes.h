// Shape checks of a final plan (planner spec section 4): for each parameter
// of known shape, whether its S(d) placements name a dim it has, and whether
// each sharded dim splits evenly and leaves every device something.
//
// Sharding counts units, not elements: dim i of a parameter is made of
// indivisible blocks of blocks[i] elements (e.g. attention heads of head_dim
// rows), so a dim of size n has n / blocks[i] units.
#ifndef SHARDPLAN_CORE_PLANNING_SHAPES_H_
#define SHARDPLAN_CORE_PLANNING_SHAPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostics/sink.h"
#include "core/model/document.h"
#include "core/model/placement.h"

namespace shardplan {

// Where the final plan gives a parameter identity its placements.
struct ParamDeclaration {
  ParamId param = 0;
  // The placements declared (not owned; must outlive the check).
  const NamedPlacements* placements = nullptr;
  std::string fqn;         // module FQN of the plan entry ("" at the root)
  std::string local_name;  // the parameter's (possibly dotted) name in that entry
  // JSON pointer of the declaration in the document, or a label for entries
  // made by the planner (e.g. "template:tp:layers.*.mlp.gate_up_proj").
  std::string pointer;
  // A packed style (packed_colwise, planner section 2): dim `fused_dim` (negative counts
  // from the end) holds `fused_parts` fused tensors side by side (gate and
  // up: 2), each split over the dim's shard count, so its unit count must
  // divide by fused_parts x shard count. 1: nothing fused (fused_dim unused).
  int64_t fused_parts = 1;
  int32_t fused_dim = 0;
};

// Checks every declaration in order and appends, per declaration:
// - `shard-dim-out-of-range`: an S(d) on a mesh axis with d outside
//   [-rank, rank) (an error in `plan`, a warning in `check`, which must
//   keep the reference's verdict: the sink's mode);
// - then per sharded dim in increasing order, the shard count being the
//   product of the sizes of the mesh axes sharding it (a warning each):
//   `empty-shard` when it has fewer units than its shard count (x fused
//   parts), otherwise `uneven-shard` when its unit count is not a multiple
//   of that (empty-shard implies uneven: only the former is reported).
//   The uneven-shard message lists the shard counts below the current one
//   that would divide the dim evenly (the 8 largest when there are more).
//   Fix-its (docs/planning.md#empty-shard): an uneven vocabulary (dim 0 of
//   an embedding's parameter, its only uneven dim) is padded to the next
//   multiple; the other empty and uneven shards share the mesh of the same
//   device count, nearest the current one, under which all of them go away.
// Axes are taken in mesh order; axes that are not mesh axes are skipped (the
// plan checks report them), as are R and P placements and declarations of
// parameters of unknown shape. A parameter declared several times is checked
// at each declaration whose placements differ from its earlier ones, so a
// tied parameter declared alike twice is reported once. Diagnostics carry
// the FQN, the full parameter name (fqn.local_name) and `pointer`.
void CheckShapes(const Document& doc, const std::vector<ParamDeclaration>& declarations, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_SHAPES_H_

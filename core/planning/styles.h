// What each template style places: planner-v1 section 2's table, and the
// other names of transformers 4.x and 5.x as their classes place (the style
// names are the document model's: core/model/style.h; docs/planning.md
// section 3 lists them all).
#ifndef SHARDPLAN_CORE_PLANNING_STYLES_H_
#define SHARDPLAN_CORE_PLANNING_STYLES_H_

#include <optional>
#include <string_view>
#include <utility>

#include "core/model/placement.h"
#include "core/model/style.h"

namespace shardplan {


// What a style places on its template's axis. Weights follow nn.Linear's
// [..., out, in] convention (dims from the end); `embedding` selects the
// variants for modules of type Embedding ([vocab, hidden]). A nullopt field
// is left unplanned ("-" in the spec's table).
// A 4.x name that transformers 5 renamed without change (LegacyOf's
// same_plan) places what its successor places.
struct StylePlacements {
  using Transition = std::pair<Placement, Placement>;  // source -> destination
  std::optional<Placement> weight;
  std::optional<Placement> bias;
  std::optional<Transition> in;   // the first named forward input
  std::optional<Transition> out;  // the output named "output"
  // What it shards holds two fused halves (gate and up) along the sharded
  // dim, each split over the axis: the dim must divide by 2 x its size.
  bool packed = false;
};
StylePlacements PlacementsOf(Style style, bool embedding);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_STYLES_H_

// What each template style of planner-v1 section 2 places (the style names
// are the document model's: core/model/style.h).
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
struct StylePlacements {
  using Transition = std::pair<Placement, Placement>;  // source -> destination
  std::optional<Placement> weight;
  std::optional<Placement> bias;
  std::optional<Transition> in;   // the first named forward input
  std::optional<Transition> out;  // the output named "output"
};
StylePlacements PlacementsOf(Style style, bool embedding);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_STYLES_H_

// The template styles of planner-v1 section 2: the names a template rule may
// use (Hugging Face `base_model_tp_plan` spellings) and what each one places.
#ifndef SHARDPLAN_CORE_STYLES_H_
#define SHARDPLAN_CORE_STYLES_H_

#include <optional>
#include <string_view>
#include <utility>

#include "core/placement.h"

namespace shardplan {

enum class Style : uint8_t {
  kColwise,
  kColwiseGatherOutput,
  kRowwise,
  kRowwiseSplitInput,
  kEmbeddingRowwise,
  kEmbeddingColwise,
  kPackedColwise,
  kReplicate,
  kReplicatedWithGradAllreduce,
  kSequenceParallel,
  kGroupedGemm,
  kEpRouter,
  kMoeTpExperts,
};

// nullopt for a name that is no style.
std::optional<Style> ParseStyle(std::string_view name);
std::string_view StyleName(Style style);

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

#endif  // SHARDPLAN_CORE_STYLES_H_

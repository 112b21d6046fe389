// The template styles of planner-v1 section 2: the names a template rule may
// use (Hugging Face `base_model_tp_plan` spellings). What each one places is
// planning's (core/planning/styles.h).
#ifndef SHARDPLAN_CORE_MODEL_STYLE_H_
#define SHARDPLAN_CORE_MODEL_STYLE_H_

#include <cstdint>
#include <optional>
#include <string_view>

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

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_STYLE_H_

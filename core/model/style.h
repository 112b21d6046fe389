// The template styles of planner-v1 section 2: the names a template rule may
// use, as Hugging Face plans spell them (`base_model_tp_plan`,
// `base_model_ep_plan`) in transformers 4.x and 5.x. What each one places is
// planning's (core/planning/styles.h).
#ifndef SHARDPLAN_CORE_MODEL_STYLE_H_
#define SHARDPLAN_CORE_MODEL_STYLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardplan {

enum class Style : uint8_t {
  // The spec's (planner-v1 section 2).
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
  // transformers 5.x's others (ParallelInterface of 5.15).
  kPackedRowwise,
  kAllReduce,
  kMoeIdentityExpert,
  kMlaKvAProj,
  kMegamoeRouter,
  kMegamoeExperts,
  // transformers 4.x's that 5.x dropped (ParallelInterface of 4.57).
  kColwiseRep,
  kRowwiseRep,
  kLocalColwise,
  kLocalRowwise,
  kLocalPackedRowwise,
  kLocal,
  kGather,
};
inline constexpr size_t kStyleCount = static_cast<size_t>(Style::kGather) + 1;

// nullopt for a name that is no style.
std::optional<Style> ParseStyle(std::string_view name);
std::string_view StyleName(Style style);
// The message that refuses `name` (no style), listing every style name:
// "unknown template style 'colwsie' (expected one of: colwise, ...)".
std::string UnknownStyleMessage(std::string_view name);

// What transformers 5 has in place of a 4.x style name it dropped (the
// info legacy-style-name): the style it uses instead, if any, and whether
// that one plans exactly the same (then the engine plans the 4.x name as
// it); else `difference` says what changes ("also all-reduces the
// output").
struct LegacyStyle {
  std::optional<Style> successor;
  bool same_plan = false;
  std::string_view difference;
};
// nullopt for a name transformers 5 has (or the spec's).
std::optional<LegacyStyle> LegacyOf(Style style);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_STYLE_H_

// The `training` section's vocabulary and whole-section checks
// (training-v1 section 1, docs/format.md): shared by the parser and the
// builder so that both accept and refuse the same sections.
#ifndef SHARDPLAN_CORE_MODEL_TRAINING_H_
#define SHARDPLAN_CORE_MODEL_TRAINING_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/model/document.h"
#include "core/model/document_checks.h"

namespace shardplan {

// The largest value of a model description or activation setting: below
// 2^31, so that the activation formula's products stay within 128 bits.
inline constexpr int64_t kMaxModelValue = (int64_t{1} << 31) - 1;
// The largest `prefetch`.
inline constexpr int64_t kMaxPrefetch = 64;

std::optional<Optimizer> ParseOptimizer(std::string_view name);
std::string_view OptimizerName(Optimizer optimizer);
// Optimizer states kept per trained element: adamw and adam 2, momentum 1,
// sgd and none 0.
uint64_t OptimizerStates(Optimizer optimizer);

std::optional<Recompute> ParseRecompute(std::string_view name);
std::string_view RecomputeName(Recompute recompute);

// A byte size spelled `<number><unit>`: digits with an optional fraction,
// then B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of
// 1024), rounded down to whole bytes. Nullopt for any other spelling and
// for sizes below 1 byte or of 2^63 bytes or more.
std::optional<uint64_t> ParseByteSize(std::string_view text);

// Checks what a section needs beyond its values' types, and fills the
// defaults that depend on the rest of the document: `shard_axes` (each a
// mesh axis, once; default ["dp"] when the mesh has an axis dp), the
// activations' tensor axis (a mesh axis; default "tp" when the mesh has
// one), the model description's ranges and defaults, activations only with
// a model description. Errors name the JSON pointer of the value at fault.
std::optional<DocumentError> CompleteTraining(Document& doc, Training& training);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_TRAINING_H_

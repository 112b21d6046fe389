#include "core/planning/styles.h"

#include <array>

namespace shardplan {

namespace {

Placement S(int32_t dim) { return {Placement::Kind::kShard, PartialOp::kSum, dim}; }
constexpr Placement R() { return {}; }
Placement P() { return {Placement::Kind::kPartial, PartialOp::kSum, 0}; }

}  // namespace

StylePlacements PlacementsOf(Style style, bool embedding) {
  using T = StylePlacements::Transition;
  if (const std::optional<LegacyStyle> legacy = LegacyOf(style); legacy && legacy->same_plan) {
    return PlacementsOf(*legacy->successor, embedding);
  }
  switch (style) {
    case Style::kColwise:
      return {embedding ? S(-1) : S(-2), S(-1), T{R(), R()}, T{S(-1), S(-1)}};
    case Style::kColwiseGatherOutput:
      return {embedding ? S(-1) : S(-2), S(-1), T{R(), R()}, T{S(-1), R()}};
    case Style::kRowwise:
      return {embedding ? S(-2) : S(-1), R(), embedding ? T{R(), R()} : T{S(-1), S(-1)}, T{P(), R()}};
    case Style::kRowwiseSplitInput:
      return {S(-1), R(), T{R(), S(-1)}, T{P(), R()}};
    case Style::kEmbeddingRowwise:
      return {S(-2), std::nullopt, T{R(), R()}, T{P(), R()}};
    case Style::kEmbeddingColwise:
      return {S(-1), std::nullopt, T{R(), R()}, T{S(-1), R()}};
    case Style::kPackedColwise:
      return {S(-2), S(-1), T{R(), R()}, T{S(-1), S(-1)}, /*packed=*/true};
    case Style::kReplicate:
    case Style::kReplicatedWithGradAllreduce:
      return {R(), R(), std::nullopt, std::nullopt};
    case Style::kSequenceParallel:
      return {R(), R(), T{S(1), S(1)}, T{S(1), S(1)}};
    case Style::kGroupedGemm:
      return {S(0), S(0), std::nullopt, std::nullopt};
    case Style::kEpRouter:
      return {R(), R(), T{R(), R()}, T{R(), R()}};
    case Style::kMoeTpExperts:
      return {std::nullopt, std::nullopt, T{R(), R()}, T{P(), R()}};
    // transformers 5.x: PackedRowwiseParallel (the fused weight as rowwise),
    // AllReduceParallel; the others replicate and change no placement in
    // the forward (an expert's input scaled, a kernel's own expert
    // parallelism, a gradient hook).
    case Style::kPackedRowwise:
      return {S(-1), R(), T{S(-1), S(-1)}, T{P(), R()}, /*packed=*/true};
    case Style::kAllReduce:
      return {R(), R(), std::nullopt, T{P(), R()}};
    case Style::kMoeIdentityExpert:
    case Style::kMlaKvAProj:
    case Style::kMegamoeRouter:
    case Style::kMegamoeExperts:
      return {R(), R(), std::nullopt, std::nullopt};
    // transformers 4.x without a same-plan successor: RowwiseParallel and
    // PackedRowwiseParallel on local tensors leave the output partial (the
    // parent's GatherParallel all-reduces it; the fused bias is split as the
    // weight); IsolatedParallel keeps its parameters whole on every device
    // (scaled by 1/size, summed back by that all-reduce); GatherParallel
    // replicates and all-reduces its output.
    case Style::kLocalRowwise:
      return {S(-1), R(), T{S(-1), S(-1)}, T{P(), P()}};
    case Style::kLocalPackedRowwise:
      return {S(-1), S(-1), T{S(-1), S(-1)}, T{P(), P()}, /*packed=*/true};
    case Style::kLocal:
      return {R(), R(), std::nullopt, std::nullopt};
    case Style::kGather:
      return {R(), R(), std::nullopt, T{P(), R()}};
    case Style::kColwiseRep:
    case Style::kRowwiseRep:
    case Style::kLocalColwise:
      break;  // their successors' (above)
  }
  return {};
}

}  // namespace shardplan

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
      return {S(-2), S(-1), T{R(), R()}, T{S(-1), S(-1)}};
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
  }
  return {};
}

}  // namespace shardplan

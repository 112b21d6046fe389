#include "core/model/style.h"

#include <array>
#include <utility>

namespace shardplan {
namespace {

constexpr std::array<std::pair<std::string_view, Style>, 13> kStyles = {{
    {"colwise", Style::kColwise},
    {"colwise_gather_output", Style::kColwiseGatherOutput},
    {"rowwise", Style::kRowwise},
    {"rowwise_split_input", Style::kRowwiseSplitInput},
    {"embedding_rowwise", Style::kEmbeddingRowwise},
    {"embedding_colwise", Style::kEmbeddingColwise},
    {"packed_colwise", Style::kPackedColwise},
    {"replicate", Style::kReplicate},
    {"replicated_with_grad_allreduce", Style::kReplicatedWithGradAllreduce},
    {"sequence_parallel", Style::kSequenceParallel},
    {"grouped_gemm", Style::kGroupedGemm},
    {"ep_router", Style::kEpRouter},
    {"moe_tp_experts", Style::kMoeTpExperts},
}};

}  // namespace

std::optional<Style> ParseStyle(std::string_view name) {
  for (const auto& [spelling, style] : kStyles) {
    if (spelling == name) return style;
  }
  return std::nullopt;
}

std::string_view StyleName(Style style) {
  for (const auto& [spelling, s] : kStyles) {
    if (s == style) return spelling;
  }
  return "?";
}

}  // namespace shardplan

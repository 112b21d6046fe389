#include "core/model/style.h"

#include <array>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

constexpr std::array<std::pair<std::string_view, Style>, kStyleCount> kStyles = {{
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
    {"packed_rowwise", Style::kPackedRowwise},
    {"all_reduce", Style::kAllReduce},
    {"moe_identity_expert", Style::kMoeIdentityExpert},
    {"mla_kv_a_proj", Style::kMlaKvAProj},
    {"megamoe_router", Style::kMegamoeRouter},
    {"megamoe_experts", Style::kMegamoeExperts},
    {"colwise_rep", Style::kColwiseRep},
    {"rowwise_rep", Style::kRowwiseRep},
    {"local_colwise", Style::kLocalColwise},
    {"local_rowwise", Style::kLocalRowwise},
    {"local_packed_rowwise", Style::kLocalPackedRowwise},
    {"local", Style::kLocal},
    {"gather", Style::kGather},
}};

constexpr bool InEnumOrder() {
  for (size_t i = 0; i < kStyles.size(); ++i) {
    if (static_cast<size_t>(kStyles[i].second) != i) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kStyles lists the styles in enum order");

}  // namespace

std::optional<Style> ParseStyle(std::string_view name) {
  for (const auto& [spelling, style] : kStyles) {
    if (spelling == name) return style;
  }
  return std::nullopt;
}

std::string_view StyleName(Style style) { return kStyles[static_cast<size_t>(style)].first; }

std::string UnknownStyleMessage(std::string_view name) {
  std::string message = absl::StrCat("unknown template style ", PyRepr(name), " (expected one of: ");
  for (size_t s = 0; s < kStyles.size(); ++s) absl::StrAppend(&message, s == 0 ? "" : ", ", kStyles[s].first);
  return message + ")";
}

std::optional<LegacyStyle> LegacyOf(Style style) {
  // transformers 5.1 renamed them (Llama 4's plan shows each change).
  switch (style) {
    case Style::kColwiseRep:
      return LegacyStyle{Style::kColwiseGatherOutput, true, ""};
    case Style::kRowwiseRep:
      return LegacyStyle{Style::kRowwiseSplitInput, true, ""};
    case Style::kLocalColwise:
      return LegacyStyle{Style::kColwise, true, ""};
    case Style::kLocalRowwise:
      return LegacyStyle{Style::kRowwise, false, "also all-reduces the output (P -> R), as a 'gather' on the "
                                                 "parent did"};
    case Style::kLocalPackedRowwise:
      return LegacyStyle{Style::kPackedRowwise, false, "also all-reduces the output (P -> R), as a 'gather' on "
                                                       "the parent did"};
    case Style::kGather:
      return LegacyStyle{Style::kMoeTpExperts, false, "plans no weight or bias of the block itself and gives its "
                                                      "input port R -> R"};
    case Style::kLocal:
      return LegacyStyle{std::nullopt, false, ""};
    default:
      return std::nullopt;
  }
}

}  // namespace shardplan

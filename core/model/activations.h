// Activation memory of one training device (training-v1 section 3;
// docs/planning.md section 6, "Activations").
//
// Contract: the bytes of activations one device keeps between the forward
// and the backward pass of one micro-batch of `micro_batch` sequences of
// `seq_len` tokens, computed from the model description alone with the
// formulas of Korthikanti et al., "Reducing Activation Recomputation in Large
// Transformer Models" (2022), generalized to grouped-query attention, gated
// MLPs and mixture-of-experts layers. Every device holds the same amount.
// The arithmetic is exact (128-bit integers, no floating point): each term
// divided by t_sp (t with sequence parallelism, else 1) is multiplied by
// t / t_sp, each term divided by t is taken as is, the sum is divided by t
// once and rounded up to a whole byte.
//
// Assumptions:
// - activations are 16-bit (2 bytes an element), dropout masks 1 byte an
//   element, the logits kept for the loss 32-bit;
// - the tensor-parallel axis (size t) splits attention heads, the MLP's
//   hidden size and the vocabulary; with sequence parallelism it also splits
//   the sequence in the layer norms, dropouts and the inputs of the first
//   linear layers;
// - balanced routing: expert parallelism does not divide activations, since
//   each expert-parallel rank processes its own tokens' k routed copies on
//   average, which is what a rank holding every expert would process;
// - pipeline parallelism is not modelled (p = 1): every device holds every
//   layer.
#ifndef SHARDPLAN_CORE_MODEL_ACTIVATIONS_H_
#define SHARDPLAN_CORE_MODEL_ACTIVATIONS_H_

#include <cstdint>
#include <optional>

#include "absl/numeric/int128.h"
#include "core/model/document.h"

namespace shardplan {

// The formula's parts, each as t x bytes, which is an integer: the bytes of
// a part are its value / t. The total is
// ceil((dense_layers x dense_layer + moe_layers x moe_layer +
// embedding_output) / t).
struct ActivationTerms {
  absl::uint128 dense_layer = 0;       // one dense transformer layer
  absl::uint128 moe_layer = 0;         // one MoE layer (0 when there is none)
  absl::uint128 embedding_output = 0;  // embedding dropout mask, final norm
                                       // and output projection inputs, fp32
                                       // logits
  uint64_t dense_layers = 0;  // every layer without experts, else the first
                              // first_k_dense_replace
  uint64_t moe_layers = 0;    // the others when num_experts > 0
};

// The parts of ActivationBytes. nullopt when one of them does not fit in 128
// bits (the total is then more than kMaxParameterBytes), and for inputs
// outside the contract the parser guarantees (t = 0, a negative field).
std::optional<ActivationTerms> ActivationTermsOf(const ModelDescription& model,
                                                 const ActivationSettings& settings,
                                                 uint64_t t);

// Activation bytes of one device (training-v1 section 3; docs/planning.md
// section "Activations"). t: size of the tensor-parallel axis (>= 1).
// Returns nullopt when the exact value is more than kMaxParameterBytes
// (2^63 - 1, core/model/document.h), or under ActivationTermsOf's nullopt
// conditions.
std::optional<uint64_t> ActivationBytes(const ModelDescription& model,
                                        const ActivationSettings& settings, uint64_t t);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_ACTIVATIONS_H_

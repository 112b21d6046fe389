#include "core/model/activations.h"

#include <algorithm>
#include <initializer_list>

namespace shardplan {
namespace {

using U128 = unsigned __int128;

// Sums and products of 128-bit integers that remember whether one of them
// overflowed (its value is then meaningless).
class Exact {
 public:
  U128 Mul(std::initializer_list<U128> factors) {
    U128 product = 1;
    for (U128 factor : factors) {
      if (__builtin_mul_overflow(product, factor, &product)) overflow_ = true;
    }
    return product;
  }
  U128 Add(std::initializer_list<U128> terms) {
    U128 sum = 0;
    for (U128 term : terms) {
      if (__builtin_add_overflow(sum, term, &sum)) overflow_ = true;
    }
    return sum;
  }
  bool overflow() const { return overflow_; }

 private:
  bool overflow_ = false;
};

}  // namespace

std::optional<ActivationTerms> ActivationTermsOf(const ModelDescription& model,
                                                 const ActivationSettings& settings,
                                                 uint64_t t) {
  if (t == 0) return std::nullopt;
  for (int64_t field :
       {model.hidden_size, model.num_attention_heads, model.num_key_value_heads, model.head_dim,
        model.intermediate_size, model.num_hidden_layers, model.vocab_size, model.num_experts,
        model.num_experts_per_tok, model.moe_intermediate_size, model.num_shared_experts,
        model.first_k_dense_replace, settings.micro_batch, settings.seq_len}) {
    if (field < 0) return std::nullopt;
  }
  const U128 s = static_cast<uint64_t>(settings.seq_len);
  const U128 b = static_cast<uint64_t>(settings.micro_batch);
  const U128 h = static_cast<uint64_t>(model.hidden_size);
  const U128 a = static_cast<uint64_t>(model.num_attention_heads);
  const U128 kv = static_cast<uint64_t>(model.num_key_value_heads);
  const U128 d = static_cast<uint64_t>(model.head_dim);
  const U128 f = static_cast<uint64_t>(model.intermediate_size);
  const U128 g = model.gated_mlp ? 4 : 2;  // MLP hidden tensors of 2 bytes kept
  const U128 k = static_cast<uint64_t>(model.num_experts_per_tok);
  const U128 fe = static_cast<uint64_t>(model.moe_intermediate_size);
  const U128 ns = static_cast<uint64_t>(model.num_shared_experts);
  const U128 v = static_cast<uint64_t>(model.vocab_size);
  // t / t_sp: what a "/ t_sp" term is multiplied by so that every term is
  // over the same denominator t.
  const U128 sp = settings.sequence_parallel ? 1 : t;

  ActivationTerms terms;
  const uint64_t layers = static_cast<uint64_t>(model.num_hidden_layers);
  terms.dense_layers =
      model.num_experts > 0
          ? std::min(layers, static_cast<uint64_t>(model.first_k_dense_replace))
          : layers;
  terms.moe_layers = layers - terms.dense_layers;

  Exact x;
  const U128 sbh = x.Mul({s, b, h});
  // One layer, as t x bytes. Full recomputation keeps only the layer's input.
  auto layer = [&](bool moe) -> U128 {
    if (settings.recompute == Recompute::kFull) return x.Mul({sp, 2, sbh});
    // Attention: the layer norm's output (the input of Q, K, V) and the
    // output dropout's mask, split only by sequence parallelism.
    const U128 attention_shared = x.Mul({sp, 3, sbh});
    // Q, K, V and the output projection's input, split by heads.
    const U128 attention_split = x.Mul({2, s, b, x.Add({x.Mul({2, a, d}), x.Mul({2, kv, d})})});
    // Softmax output, its dropout mask and the dropout's output: 5as^2b,
    // split by heads; recomputed under selective recomputation.
    const U128 scores = settings.recompute == Recompute::kNone ? x.Mul({5, a, s, s, b}) : 0;
    // The inputs of the two layer norms.
    const U128 norms = x.Mul({sp, 4, sbh});
    // The MLP's input and its output dropout's mask.
    const U128 mlp_shared = x.Mul({sp, 3, sbh});
    U128 mlp;
    if (moe) {
      // The k routed copies of each token (the experts' inputs), the
      // routed experts' hidden tensors, the shared experts' hidden tensors.
      mlp = x.Add({x.Mul({sp, 2, s, b, k, h}), x.Mul({2, s, b, k, fe, g}),
                   x.Mul({2, s, b, ns, fe, g})});
    } else {
      mlp = x.Mul({2, s, b, f, g});
    }
    return x.Add({attention_shared, attention_split, scores, norms, mlp_shared, mlp});
  };
  if (terms.dense_layers > 0) terms.dense_layer = layer(/*moe=*/false);
  if (terms.moe_layers > 0) terms.moe_layer = layer(/*moe=*/true);
  // The embedding's dropout mask; the final norm's input and the output
  // projection's input; the fp32 logits, split by the vocabulary.
  terms.embedding_output = x.Add({x.Mul({sp, sbh}), x.Mul({sp, 4, sbh}), x.Mul({4, s, b, v})});
  if (x.overflow()) return std::nullopt;
  return terms;
}

std::optional<uint64_t> ActivationBytes(const ModelDescription& model,
                                        const ActivationSettings& settings, uint64_t t) {
  const std::optional<ActivationTerms> terms = ActivationTermsOf(model, settings, t);
  // A part of 2^128 or more is more than 2^128 / t >= 2^64 bytes.
  if (!terms) return std::nullopt;
  Exact x;
  const U128 scaled =
      x.Add({x.Mul({terms->dense_layers, static_cast<U128>(terms->dense_layer)}),
             x.Mul({terms->moe_layers, static_cast<U128>(terms->moe_layer)}),
             static_cast<U128>(terms->embedding_output)});
  if (x.overflow()) return std::nullopt;
  const U128 bytes = scaled / t + (scaled % t != 0 ? 1 : 0);
  if (bytes > kMaxParameterBytes) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

}  // namespace shardplan

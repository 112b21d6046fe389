// Activation memory: the numbers of Korthikanti et al., "Reducing Activation
// Recomputation in Large Transformer Models" (2022) with its GPT models
// (Table 2's per-layer rows, the ratios of section 5, the embedding and
// output terms of section 4.3), each expectation evaluated here from the
// paper's own expressions in exact rationals; then the generalizations
// (grouped-query attention, gated MLPs, mixture-of-experts layers),
// recomputation, the final rounding and the limits.
#include "core/model/activations.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "absl/numeric/int128.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

using I128 = __int128;

I128 Gcd(I128 x, I128 y) {
  if (x < 0) x = -x;
  if (y < 0) y = -y;
  while (y != 0) {
    const I128 r = x % y;
    x = y;
    y = r;
  }
  return x;
}

// An exact rational, to write the paper's expressions as they are printed.
struct Q {
  I128 num;
  I128 den;
  Q(I128 n = 0, I128 d = 1) : num(n), den(d) {  // NOLINT: implicit from integers
    if (den < 0) {
      num = -num;
      den = -den;
    }
    const I128 g = Gcd(num, den);
    if (g > 1) {
      num /= g;
      den /= g;
    }
  }
};
Q operator+(Q x, Q y) { return Q(x.num * y.den + y.num * x.den, x.den * y.den); }
Q operator-(Q x, Q y) { return Q(x.num * y.den - y.num * x.den, x.den * y.den); }
Q operator*(Q x, Q y) { return Q(x.num * y.num, x.den * y.den); }
Q operator/(Q x, Q y) { return Q(x.num * y.den, x.den * y.num); }
bool operator==(Q x, Q y) { return x.num == y.num && x.den == y.den; }
bool IsInteger(Q x) { return x.den == 1; }
Q Ceil(Q x) { return Q(x.num / x.den + (x.num % x.den > 0 ? 1 : 0)); }
// x rounded to the nearest integer, halves up.
Q Round(Q x) { return Ceil(x - Q(1, 2)) + (IsInteger(x - Q(1, 2)) ? 1 : 0); }

std::string Str(I128 x) {
  if (x == 0) return "0";
  std::string digits;
  const bool negative = x < 0;
  if (negative) x = -x;
  for (; x > 0; x /= 10) digits.insert(digits.begin(), static_cast<char>('0' + x % 10));
  return negative ? "-" + digits : digits;
}
std::ostream& operator<<(std::ostream& out, Q x) {
  return out << Str(x.num) << (x.den == 1 ? "" : "/" + Str(x.den));
}

Q I(absl::uint128 x) { return Q(static_cast<I128>(static_cast<unsigned __int128>(x))); }

// The paper's models (Table 3): attention heads a, hidden size h, layers L.
struct Gpt {
  const char* name;
  int64_t a;
  int64_t h;
  int64_t layers;
};
constexpr Gpt kGpts[] = {
    {"22B", 64, 6144, 48},
    {"175B", 96, 12288, 96},
    {"530B", 128, 20480, 105},
    {"1T", 160, 25600, 128},
};
constexpr int64_t kSeq = 2048;
constexpr int64_t kVocab = 51200;
constexpr uint64_t kTensor = 8;

// The paper's configuration: a x d = h, kv = a, f = 4h, a GeLU MLP, no
// experts.
ModelDescription GptModel(const Gpt& gpt) {
  ModelDescription model;
  model.hidden_size = gpt.h;
  model.num_attention_heads = gpt.a;
  model.num_key_value_heads = gpt.a;
  model.head_dim = gpt.h / gpt.a;
  model.intermediate_size = 4 * gpt.h;
  model.gated_mlp = false;
  model.num_hidden_layers = gpt.layers;
  model.vocab_size = kVocab;
  model.moe_intermediate_size = 4 * gpt.h;
  return model;
}

ActivationSettings Settings(int64_t s, int64_t b, Recompute recompute, bool sequence_parallel) {
  ActivationSettings settings;
  settings.seq_len = s;
  settings.micro_batch = b;
  settings.recompute = recompute;
  settings.sequence_parallel = sequence_parallel;
  return settings;
}

ActivationTerms Terms(const ModelDescription& model, const ActivationSettings& settings,
                      uint64_t t) {
  const std::optional<ActivationTerms> terms = ActivationTermsOf(model, settings, t);
  EXPECT_TRUE(terms.has_value());
  return terms.value_or(ActivationTerms{});
}

// The exact bytes of one dense layer, of one MoE layer, of the embedding
// and output.
Q DenseLayer(const ModelDescription& model, const ActivationSettings& settings, uint64_t t) {
  return I(Terms(model, settings, t).dense_layer) / Q(static_cast<I128>(t));
}
Q MoeLayer(const ModelDescription& model, const ActivationSettings& settings, uint64_t t) {
  return I(Terms(model, settings, t).moe_layer) / Q(static_cast<I128>(t));
}
Q EmbeddingOutput(const ModelDescription& model, const ActivationSettings& settings, uint64_t t) {
  return I(Terms(model, settings, t).embedding_output) / Q(static_cast<I128>(t));
}

// ActivationBytes, as a rational to compare with the paper's expressions.
Q Bytes(const ModelDescription& model, const ActivationSettings& settings, uint64_t t) {
  const std::optional<uint64_t> bytes = ActivationBytes(model, settings, t);
  EXPECT_TRUE(bytes.has_value());
  return Q(static_cast<I128>(bytes.value_or(0)));
}

// Table 2: activation bytes per transformer layer.
TEST(ActivationsTest, PaperTable2PerLayerRows) {
  for (const Gpt& gpt : kGpts) {
    for (int64_t b : {1, 2, 4}) {
      SCOPED_TRACE(std::string(gpt.name) + " b=" + std::to_string(b));
      const ModelDescription model = GptModel(gpt);
      const Q s = kSeq, h = gpt.h, a = gpt.a, t = static_cast<I128>(kTensor);
      const Q sbh = s * Q(b) * h;
      const Q no_parallelism = sbh * (Q(34) + Q(5) * a * s / h);
      const Q tensor = sbh * (Q(10) + Q(24) / t + Q(5) * a * s / (h * t));
      const Q tensor_sequence = sbh * (Q(34) / t + Q(5) * a * s / (h * t));
      const Q tensor_selective = sbh * (Q(10) + Q(24) / t);
      const Q tensor_sequence_selective = sbh * (Q(34) / t);
      const Q full = sbh * Q(2);
      for (const Q& row : {no_parallelism, tensor, tensor_sequence, tensor_selective,
                           tensor_sequence_selective, full}) {
        ASSERT_TRUE(IsInteger(row)) << row;  // whole bytes in these configurations
      }
      for (bool sp : {false, true}) {
        EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kNone, sp), 1), no_parallelism);
        EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kFull, sp), 1), full);
      }
      EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kNone, false), kTensor), tensor);
      EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kNone, true), kTensor),
                tensor_sequence);
      EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kSelective, false), kTensor),
                tensor_selective);
      EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kSelective, true), kTensor),
                tensor_sequence_selective);
      EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kFull, false), kTensor), full);
      // With sequence parallelism the kept input is split too.
      EXPECT_EQ(DenseLayer(model, Settings(kSeq, b, Recompute::kFull, true), kTensor), full / t);
      // A model of one layer: that layer and the embedding and output.
      ModelDescription one = model;
      one.num_hidden_layers = 1;
      EXPECT_EQ(Bytes(one, Settings(kSeq, b, Recompute::kNone, true), kTensor),
                tensor_sequence +
                    EmbeddingOutput(model, Settings(kSeq, b, Recompute::kNone, true), kTensor));
    }
  }
}

// Section 5: 5as/h is 80 for GPT-3 and 64 for MT-NLG, so selective
// recomputation saves 80/(34+80) = 70% and 64/(34+64) = 65% of a layer's
// activations (with or without tensor + sequence parallelism, which divides
// both by t).
TEST(ActivationsTest, PaperSelectiveRecomputationSavings) {
  struct Case {
    Gpt gpt;
    int64_t ratio;
    int64_t percent;
  };
  for (const Case& c : {Case{kGpts[1], 80, 70}, Case{kGpts[2], 64, 65}}) {
    SCOPED_TRACE(c.gpt.name);
    const ModelDescription model = GptModel(c.gpt);
    EXPECT_EQ(Q(5) * Q(c.gpt.a) * Q(kSeq) / Q(c.gpt.h), Q(c.ratio));
    for (auto [t, sp] : {std::pair<uint64_t, bool>{1, false}, {kTensor, true}}) {
      const Q none = DenseLayer(model, Settings(kSeq, 1, Recompute::kNone, sp), t);
      const Q selective = DenseLayer(model, Settings(kSeq, 1, Recompute::kSelective, sp), t);
      const Q saved = (none - selective) / none;
      EXPECT_EQ(saved, Q(c.ratio, 34 + c.ratio));
      EXPECT_EQ(Round(Q(100) * saved), c.percent) << saved;
    }
  }
}

// Section 4.3 with p = 1 and sequence parallelism: the embedding's dropout
// sbh/t, the output layer 4sbh/t (1 + v/h), so the whole model keeps
// sbh/t (L(34 + 5as/h) + 1 + 4(1 + v/h)); with selective recomputation
// sbh/t (34L + 1 + 4(1 + v/h)).
TEST(ActivationsTest, PaperWholeModelWithSequenceParallelism) {
  for (const Gpt& gpt : kGpts) {
    SCOPED_TRACE(gpt.name);
    const ModelDescription model = GptModel(gpt);
    const Q s = kSeq, h = gpt.h, a = gpt.a, L = gpt.layers, v = kVocab,
            t = static_cast<I128>(kTensor);
    const Q sbh_t = s * h / t;
    const Q embedding_output = sbh_t * (Q(1) + Q(4) * (Q(1) + v / h));
    const Q none = sbh_t * (L * (Q(34) + Q(5) * a * s / h) + Q(1) + Q(4) * (Q(1) + v / h));
    const Q selective = sbh_t * (Q(34) * L + Q(1) + Q(4) * (Q(1) + v / h));
    ASSERT_TRUE(IsInteger(none));
    ASSERT_TRUE(IsInteger(selective));
    EXPECT_EQ(EmbeddingOutput(model, Settings(kSeq, 1, Recompute::kNone, true), kTensor),
              embedding_output);
    EXPECT_EQ(Bytes(model, Settings(kSeq, 1, Recompute::kNone, true), kTensor), none);
    EXPECT_EQ(Bytes(model, Settings(kSeq, 1, Recompute::kSelective, true), kTensor),
              selective);
    // Full recomputation keeps each layer's input, 2sbh/t, and the same
    // embedding and output.
    EXPECT_EQ(Bytes(model, Settings(kSeq, 1, Recompute::kFull, true), kTensor),
              L * Q(2) * sbh_t + embedding_output);
  }
}

// Without sequence parallelism the embedding's dropout, the final norm's
// input and the output projection's input are whole on every device; only
// the logits are split by the vocabulary.
TEST(ActivationsTest, EmbeddingAndOutputWithoutSequenceParallelism) {
  const ModelDescription model = GptModel(kGpts[1]);
  const Q s = kSeq, h = kGpts[1].h, v = kVocab;
  for (uint64_t t : {uint64_t{1}, uint64_t{2}, kTensor}) {
    for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      EXPECT_EQ(EmbeddingOutput(model, Settings(kSeq, 1, recompute, false), t),
                s * h + Q(4) * s * h + Q(4) * s * v / Q(static_cast<I128>(t)));
    }
  }
}

// Grouped-query attention: 8 KV heads of 32 shrink K and V, nothing else
// (a Llama-3-8B layer: h 4096, d 128, f 14336 gated, s 4096, b 1, t 1).
TEST(ActivationsTest, GroupedQueryAttentionShrinksOnlyKeysAndValues) {
  ModelDescription model;
  model.hidden_size = 4096;
  model.num_attention_heads = 32;
  model.num_key_value_heads = 8;
  model.head_dim = 128;
  model.intermediate_size = 14336;
  model.gated_mlp = true;
  model.num_hidden_layers = 32;
  model.vocab_size = 128256;
  model.moe_intermediate_size = 14336;
  const ActivationSettings settings = Settings(4096, 1, Recompute::kNone, false);
  // By hand, sbh = 4096 x 4096 = 16777216:
  //   norms, attention and MLP shared parts 10 sbh       =  167772160
  //   Q, K, V, projection 2sb(2 x 32 x 128 + 2 x 8 x 128) =   83886080
  //   scores 5 x 32 x 4096^2                             = 2684354560
  //   gated MLP 2sb x 14336 x 4                          =  469762048
  const I128 layer = I128{167772160} + 83886080 + I128{2684354560} + 469762048;
  EXPECT_EQ(DenseLayer(model, settings, 1), Q(layer));
  // K and V of 24 more heads: 2 tensors x 2 bytes x s x b x 24 x 128.
  ModelDescription full_heads = model;
  full_heads.num_key_value_heads = 32;
  EXPECT_EQ(DenseLayer(full_heads, settings, 1) - DenseLayer(model, settings, 1),
            Q(2 * 2 * 4096 * 24 * 128));
  // Split over 8 devices, sequence parallel: the same difference / 8.
  const ActivationSettings split = Settings(4096, 1, Recompute::kNone, true);
  EXPECT_EQ(DenseLayer(full_heads, split, 8) - DenseLayer(model, split, 8),
            Q(2 * 2 * 4096 * 24 * 128, 8));
  // The embedding and the logits: 5sbh + 4sbv.
  EXPECT_EQ(Bytes(model, settings, 1),
            Q(32 * layer + 5 * I128{16777216} + 4 * I128{4096} * 128256));
}

// A gated MLP keeps 8sbf instead of 4sbf in the part split by t (and, in an
// MoE layer, 8sbk fe + 8sb ns fe instead of half that).
TEST(ActivationsTest, GatedMlpDoublesTheSplitMlpPart) {
  ModelDescription model = GptModel(kGpts[1]);
  model.num_experts = 16;
  model.num_experts_per_tok = 2;
  model.moe_intermediate_size = 3000;
  model.num_shared_experts = 1;
  model.first_k_dense_replace = 3;
  const Q s = kSeq, b = 2, f = model.intermediate_size, k = 2, fe = 3000, ns = 1;
  for (auto [t, sp] : {std::pair<uint64_t, bool>{1, false}, {4, false}, {4, true}}) {
    const ActivationSettings settings = Settings(kSeq, 2, Recompute::kSelective, sp);
    ModelDescription gated = model;
    gated.gated_mlp = true;
    const Q tq = static_cast<I128>(t);
    EXPECT_EQ(DenseLayer(gated, settings, t) - DenseLayer(model, settings, t),
              Q(4) * s * b * f / tq);
    EXPECT_EQ(MoeLayer(gated, settings, t) - MoeLayer(model, settings, t),
              (Q(4) * s * b * k * fe + Q(4) * s * b * ns * fe) / tq);
  }
}

// A tiny MoE model by hand: h 4, a 2, kv 1, d 2, f 8 gated, 4 experts, top 2,
// fe 3, 1 shared expert, first layer dense, 3 layers, v 10, s 2, b 1, t 1.
TEST(ActivationsTest, MixtureOfExpertsByHand) {
  ModelDescription model;
  model.hidden_size = 4;
  model.num_attention_heads = 2;
  model.num_key_value_heads = 1;
  model.head_dim = 2;
  model.intermediate_size = 8;
  model.gated_mlp = true;
  model.num_hidden_layers = 3;
  model.vocab_size = 10;
  model.num_experts = 4;
  model.num_experts_per_tok = 2;
  model.moe_intermediate_size = 3;
  model.num_shared_experts = 1;
  model.first_k_dense_replace = 1;
  const ActivationSettings settings = Settings(2, 1, Recompute::kNone, false);
  // sbh = 8. Attention and norms: 3sbh 24 + 2sb(2ad + 2kv d) 48 + 5as^2b 40
  // + 4sbh 32 = 144; MLP shared part 3sbh 24.
  // Dense layer: 144 + 24 + 2sbfg (2 x 2 x 8 x 4 = 128) = 296.
  // MoE layer: 144 + 24 + 2sbkh 32 + 2sbk fe g 96 + 2sb ns fe g 48 = 344.
  // Embedding and output: sbh 8 + 4sbh 32 + 4sbv 80 = 120.
  const ActivationTerms terms = Terms(model, settings, 1);
  EXPECT_EQ(terms.dense_layers, 1u);
  EXPECT_EQ(terms.moe_layers, 2u);
  EXPECT_EQ(I(terms.dense_layer), 296);
  EXPECT_EQ(I(terms.moe_layer), 344);
  EXPECT_EQ(I(terms.embedding_output), 120);
  EXPECT_EQ(Bytes(model, settings, 1), 296 + 2 * 344 + 120);

  // Without experts every layer is dense, whatever first_k_dense_replace.
  ModelDescription dense = model;
  dense.num_experts = 0;
  EXPECT_EQ(Bytes(dense, settings, 1), 3 * 296 + 120);
  // All layers dense by first_k_dense_replace.
  ModelDescription replaced = model;
  replaced.first_k_dense_replace = 3;
  EXPECT_EQ(Terms(replaced, settings, 1).moe_layers, 0u);
  EXPECT_EQ(Bytes(replaced, settings, 1), 3 * 296 + 120);
}

// A DeepSeek-V2-Lite-like model split over t = 4 with sequence
// parallelism, against the format's terms written out.
TEST(ActivationsTest, MixtureOfExpertsSplit) {
  ModelDescription model;
  model.hidden_size = 2048;
  model.num_attention_heads = 16;
  model.num_key_value_heads = 16;
  model.head_dim = 128;
  model.intermediate_size = 10944;
  model.gated_mlp = true;
  model.num_hidden_layers = 27;
  model.vocab_size = 102400;
  model.num_experts = 64;
  model.num_experts_per_tok = 6;
  model.moe_intermediate_size = 1408;
  model.num_shared_experts = 2;
  model.first_k_dense_replace = 1;
  const Q s = 4096, b = 1, h = 2048, a = 16, kv = 16, d = 128, f = 10944, g = 4, k = 6,
          fe = 1408, ns = 2, v = 102400, t = 4, L = 27;
  for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    for (bool sp : {false, true}) {
      SCOPED_TRACE(std::to_string(static_cast<int>(recompute)) + (sp ? " sp" : ""));
      const Q t_sp = sp ? t : Q(1);
      const Q scores = recompute == Recompute::kNone ? Q(5) * a * s * s * b / t : Q(0);
      const Q common = Q(3) * s * b * h / t_sp +
                       Q(2) * s * b * (Q(2) * a * d + Q(2) * kv * d) / t + scores +
                       Q(4) * s * b * h / t_sp + Q(3) * s * b * h / t_sp;
      Q dense = common + Q(2) * s * b * f * g / t;
      Q moe = common + Q(2) * s * b * k * h / t_sp + Q(2) * s * b * k * fe * g / t +
              Q(2) * s * b * ns * fe * g / t;
      if (recompute == Recompute::kFull) dense = moe = Q(2) * s * b * h / t_sp;
      const Q embedding_output =
          s * b * h / t_sp + Q(4) * s * b * h / t_sp + Q(4) * s * b * v / t;
      const ActivationSettings settings = Settings(4096, 1, recompute, sp);
      EXPECT_EQ(DenseLayer(model, settings, 4), dense);
      EXPECT_EQ(MoeLayer(model, settings, 4), moe);
      EXPECT_EQ(Bytes(model, settings, 4), Ceil(dense + (L - Q(1)) * moe + embedding_output));
    }
  }
}

// Selective recomputation drops exactly the scores, 5as^2b / t a layer.
TEST(ActivationsTest, SelectiveDropsOnlyTheScores) {
  for (const Gpt& gpt : kGpts) {
    const ModelDescription model = GptModel(gpt);
    for (bool sp : {false, true}) {
      EXPECT_EQ(Bytes(model, Settings(kSeq, 1, Recompute::kNone, sp), kTensor) -
                    Bytes(model, Settings(kSeq, 1, Recompute::kSelective, sp), kTensor),
                Q(gpt.layers) * Q(5) * Q(gpt.a) * Q(kSeq) * Q(kSeq) / Q(kTensor));
    }
  }
}

// The sum over the common denominator t is divided once, rounding up.
TEST(ActivationsTest, RoundsTheFinalDivisionUp) {
  ModelDescription model;
  model.hidden_size = 1;
  model.num_attention_heads = 1;
  model.num_key_value_heads = 1;
  model.head_dim = 1;
  model.intermediate_size = 1;
  model.gated_mlp = false;
  model.num_hidden_layers = 1;
  model.vocab_size = 2;
  model.moe_intermediate_size = 1;
  const ActivationSettings settings = Settings(1, 1, Recompute::kNone, true);
  // Per layer (3 + 2(2 + 2) + 5 + 4 + 3 + 4) / 3 = 27/3; embedding and
  // output (1 + 4 + 4 x 2) / 3 = 13/3: 40/3 in all.
  const Q exact = Q(27, 3) + Q(13, 3);
  ASSERT_FALSE(IsInteger(exact));
  EXPECT_EQ(Bytes(model, settings, 3), Ceil(exact));
  EXPECT_EQ(Bytes(model, settings, 3), 14);
  // Each part is exact; only the total is rounded.
  ModelDescription two = model;
  two.num_hidden_layers = 2;
  EXPECT_EQ(Bytes(two, settings, 3), Ceil(exact + Q(27, 3)));
  ModelDescription odd = model;
  odd.vocab_size = 3;
  EXPECT_EQ(Bytes(odd, settings, 3), Ceil(Q(27, 3) + Q(17, 3)));
  EXPECT_EQ(Bytes(odd, settings, 3), 15);  // 44/3
}

// The largest total returned is kMaxParameterBytes; one byte more, or a
// part past 128 bits, is nullopt.
TEST(ActivationsTest, LimitsAndOverflow) {
  constexpr int64_t kMaxField = (int64_t{1} << 31) - 1;
  ModelDescription model;
  model.hidden_size = kMaxField;
  model.num_attention_heads = 1;
  model.num_key_value_heads = 1;
  model.head_dim = 1;
  model.intermediate_size = 1;
  model.num_hidden_layers = kMaxField - 1;
  model.vocab_size = int64_t{1} << 29;
  model.moe_intermediate_size = 1;
  // Full recomputation, t = 1: h(2L + 5) + 4v = 2^63 - 1.
  const ActivationSettings full = Settings(1, 1, Recompute::kFull, false);
  const Q exact = Q(model.hidden_size) * (Q(2) * Q(model.num_hidden_layers) + Q(5)) +
                  Q(4) * Q(model.vocab_size);
  ASSERT_EQ(exact, Q(static_cast<I128>(kMaxParameterBytes)));
  EXPECT_EQ(ActivationBytes(model, full, 1), kMaxParameterBytes);
  model.vocab_size += 1;
  EXPECT_FALSE(ActivationBytes(model, full, 1).has_value());
  // Split over two devices with sequence parallelism it fits again.
  EXPECT_EQ(Bytes(model, Settings(1, 1, Recompute::kFull, true), 2),
            Ceil((exact + Q(4)) / Q(2)));

  // s = 3, L = 1431655763, t = 2 with sequence parallelism:
  // 3(h(2L + 5) + 4v) / 2 = (2^64 - 1) / 2 = 2^63 - 1/2 bytes, which is
  // more than kMaxParameterBytes and rounds up to 2^63.
  ModelDescription rounded = model;
  rounded.num_hidden_layers = 1431655763;
  rounded.vocab_size = int64_t{1} << 29;
  const ActivationSettings rounded_settings = Settings(3, 1, Recompute::kFull, true);
  ASSERT_EQ(Q(3) * (Q(rounded.hidden_size) * (Q(2) * Q(rounded.num_hidden_layers) + Q(5)) +
                    Q(4) * Q(rounded.vocab_size)) /
                Q(2),
            Q(static_cast<I128>(kMaxParameterBytes)) + Q(1, 2));
  EXPECT_FALSE(ActivationBytes(rounded, rounded_settings, 2).has_value());
  EXPECT_TRUE(ActivationTermsOf(rounded, rounded_settings, 2).has_value());

  // Scores of 5as^2b with s = a = 2^31 - 1: more than 2^95 bytes.
  ModelDescription wide = GptModel(kGpts[0]);
  wide.num_attention_heads = kMaxField;
  EXPECT_FALSE(
      ActivationBytes(wide, Settings(kMaxField, 1, Recompute::kNone, false), 1).has_value());
  // Every field at its largest, and t = 2^64 - 1 without sequence
  // parallelism: parts past 128 bits.
  ModelDescription huge;
  for (int64_t* field :
       {&huge.hidden_size, &huge.num_attention_heads, &huge.num_key_value_heads, &huge.head_dim,
        &huge.intermediate_size, &huge.num_hidden_layers, &huge.vocab_size, &huge.num_experts,
        &huge.num_experts_per_tok, &huge.moe_intermediate_size, &huge.num_shared_experts}) {
    *field = kMaxField;
  }
  const ActivationSettings big = Settings(kMaxField, kMaxField, Recompute::kNone, false);
  EXPECT_FALSE(ActivationTermsOf(huge, big, UINT64_MAX).has_value());
  EXPECT_FALSE(ActivationBytes(huge, big, UINT64_MAX).has_value());
  EXPECT_FALSE(ActivationBytes(huge, big, 1).has_value());

  // Inputs outside the contract.
  const ModelDescription gpt = GptModel(kGpts[0]);
  EXPECT_FALSE(ActivationBytes(gpt, Settings(kSeq, 1, Recompute::kNone, false), 0).has_value());
  EXPECT_FALSE(ActivationBytes(gpt, Settings(-1, 1, Recompute::kNone, false), 1).has_value());
}

}  // namespace
}  // namespace shardplan

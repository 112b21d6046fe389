#include "core/model/training.h"

#include <array>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/model/activations.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

constexpr std::array<std::pair<std::string_view, Optimizer>, 5> kOptimizers = {{
    {"adamw", Optimizer::kAdamW},
    {"adam", Optimizer::kAdam},
    {"momentum", Optimizer::kMomentum},
    {"sgd", Optimizer::kSgd},
    {"none", Optimizer::kNone},
}};

constexpr std::array<std::pair<std::string_view, Recompute>, 3> kRecomputes = {{
    {"none", Recompute::kNone},
    {"selective", Recompute::kSelective},
    {"full", Recompute::kFull},
}};

constexpr std::array<std::pair<std::string_view, uint64_t>, 9> kUnits = {{
    {"B", 1},
    {"KB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"TB", uint64_t{1000} * 1000 * 1000 * 1000},
    {"KiB", uint64_t{1} << 10},
    {"MiB", uint64_t{1} << 20},
    {"GiB", uint64_t{1} << 30},
    {"TiB", uint64_t{1} << 40},
}};

}  // namespace

std::optional<Optimizer> ParseOptimizer(std::string_view name) {
  for (const auto& [spelling, optimizer] : kOptimizers) {
    if (spelling == name) return optimizer;
  }
  return std::nullopt;
}

std::string_view OptimizerName(Optimizer optimizer) {
  for (const auto& [spelling, o] : kOptimizers) {
    if (o == optimizer) return spelling;
  }
  return "adamw";
}

uint64_t OptimizerStates(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kAdamW:
    case Optimizer::kAdam:
      return 2;
    case Optimizer::kMomentum:
      return 1;
    case Optimizer::kSgd:
    case Optimizer::kNone:
      return 0;
  }
  return 0;
}

std::optional<Recompute> ParseRecompute(std::string_view name) {
  for (const auto& [spelling, recompute] : kRecomputes) {
    if (spelling == name) return recompute;
  }
  return std::nullopt;
}

std::string_view RecomputeName(Recompute recompute) {
  for (const auto& [spelling, r] : kRecomputes) {
    if (r == recompute) return spelling;
  }
  return "selective";
}

std::optional<uint64_t> ParseByteSize(std::string_view text) {
  size_t i = 0;
  unsigned __int128 mantissa = 0, scale = 1;
  size_t digits = 0;
  auto digit = [&] { return i < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[i])); };
  // 36 significant digits at most keep mantissa x unit within 128 bits.
  for (; digit(); ++i, ++digits) mantissa = mantissa * 10 + static_cast<unsigned>(text[i] - '0');
  if (digits == 0) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const size_t before = digits;
    for (; digit(); ++i, ++digits) {
      mantissa = mantissa * 10 + static_cast<unsigned>(text[i] - '0');
      scale *= 10;
    }
    if (digits == before) return std::nullopt;
  }
  if (digits > 36) return std::nullopt;
  const std::string_view unit = text.substr(i);
  for (const auto& [spelling, factor] : kUnits) {
    if (spelling != unit) continue;
    const unsigned __int128 bytes = mantissa * factor / scale;
    if (bytes < 1 || bytes > static_cast<unsigned __int128>(INT64_MAX)) return std::nullopt;
    return static_cast<uint64_t>(bytes);
  }
  return std::nullopt;
}

std::optional<DocumentError> CompleteTraining(Document& doc, Training& training) {
  const auto mesh_axis = [&](std::string_view name) -> std::optional<NameId> {
    const NameId id = doc.names.Find(name);
    if (id == kNoName || !doc.IsMeshAxis(id)) return std::nullopt;
    return id;
  };
  const auto mesh_list = [&] {
    std::string list;
    for (const MeshAxis& axis : doc.mesh) absl::StrAppend(&list, list.empty() ? "" : ", ", doc.Name(axis.name));
    return list;
  };
  if (training.shard_axes_given) {
    for (size_t i = 0; i < training.shard_axes.size(); ++i) {
      const std::string pointer = absl::StrCat("/training/shard_axes/", i);
      const NameId axis = training.shard_axes[i];
      if (!doc.IsMeshAxis(axis)) {
        return DocumentError{absl::StrCat("shard axis ", PyRepr(doc.Name(axis)), " is not a mesh axis (the mesh has ",
                                          mesh_list(), ")"),
                             pointer};
      }
      for (size_t j = 0; j < i; ++j) {
        if (training.shard_axes[j] == axis) {
          return DocumentError{absl::StrCat("shard axis ", PyRepr(doc.Name(axis)), " is listed twice"), pointer};
        }
      }
    }
  } else if (const std::optional<NameId> dp = mesh_axis("dp")) {
    training.shard_axes.assign(1, *dp);
  }

  if (training.activations && !training.model) {
    return DocumentError{"'activations' needs the model description 'model' in the training section",
                         "/training/activations"};
  }
  if (training.activations) {
    ActivationSettings& activations = *training.activations;
    if (training.tensor_axis_given) {
      if (activations.tensor_axis && !doc.IsMeshAxis(*activations.tensor_axis)) {
        return DocumentError{absl::StrCat("tensor axis ", PyRepr(doc.Name(*activations.tensor_axis)),
                                          " is not a mesh axis (the mesh has ", mesh_list(), ")"),
                             "/training/activations/tensor_axis"};
      }
    } else {
      activations.tensor_axis = mesh_axis("tp");
    }
  }

  if (training.model) {
    ModelDescription& m = *training.model;
    const auto field = [](std::string_view key) { return absl::StrCat("/training/model/", key); };
    const auto in_range = [&](int64_t value, int64_t low, std::string_view key) -> std::optional<DocumentError> {
      if (value >= low && value <= kMaxModelValue) return std::nullopt;
      return DocumentError{absl::StrCat("'", key, "' must be an integer from ", low, " to 2^31 - 1"), field(key)};
    };
    // Defaults first (0 stands for "not given" where the minimum is 1).
    if (m.num_key_value_heads == 0) m.num_key_value_heads = m.num_attention_heads;
    if (m.head_dim == 0 && m.num_attention_heads > 0) {
      m.head_dim = m.hidden_size / m.num_attention_heads;
      if (m.head_dim == 0) {
        return DocumentError{"'head_dim' must be given when 'hidden_size' is less than 'num_attention_heads'",
                             "/training/model"};
      }
    }
    if (m.moe_intermediate_size == 0) m.moe_intermediate_size = m.intermediate_size;
    for (const auto& [value, low, key] : std::initializer_list<std::tuple<int64_t, int64_t, std::string_view>>{
             {m.hidden_size, 1, "hidden_size"},
             {m.num_attention_heads, 1, "num_attention_heads"},
             {m.num_key_value_heads, 1, "num_key_value_heads"},
             {m.head_dim, 1, "head_dim"},
             {m.intermediate_size, 1, "intermediate_size"},
             {m.num_hidden_layers, 1, "num_hidden_layers"},
             {m.vocab_size, 1, "vocab_size"},
             {m.num_experts, 0, "num_experts"},
             {m.num_experts_per_tok, 1, "num_experts_per_tok"},
             {m.moe_intermediate_size, 1, "moe_intermediate_size"},
             {m.num_shared_experts, 0, "num_shared_experts"},
             {m.first_k_dense_replace, 0, "first_k_dense_replace"},
         }) {
      if (auto error = in_range(value, low, key)) return error;
    }
    if (m.num_experts > 0 && m.num_experts_per_tok > m.num_experts) {
      return DocumentError{absl::StrCat("'num_experts_per_tok' (", m.num_experts_per_tok,
                                        ") must not exceed 'num_experts' (", m.num_experts, ")"),
                           field("num_experts_per_tok")};
    }
    if (m.first_k_dense_replace > m.num_hidden_layers) {
      return DocumentError{absl::StrCat("'first_k_dense_replace' (", m.first_k_dense_replace,
                                        ") must not exceed 'num_hidden_layers' (", m.num_hidden_layers, ")"),
                           field("first_k_dense_replace")};
    }
  }
  // Every figure of the training memory must be exact in 64 bits: the
  // model states and gathered bytes of all parameters, whole, and the
  // activations on one device are each kept below 2^62.
  constexpr uint64_t kHalf = uint64_t{1} << 62;
  unsigned __int128 bound = 0;
  const uint64_t per_state = (training.master_dtype ? DtypeBytes(*training.master_dtype) : 0) +
                             OptimizerStates(training.optimizer) * DtypeBytes(training.optimizer_dtype);
  for (const Parameter& param : doc.parameters) {
    if (!param.shape) continue;
    const std::optional<uint64_t> bytes = TensorBytes(*param.shape, param.dtype);
    const uint64_t elements = bytes.value_or(0) / DtypeBytes(param.dtype);
    const uint64_t grad = DtypeBytes(training.grad_dtype.value_or(param.dtype));
    // params, gathered (1 + prefetch) copies and grads, grads, master, states.
    bound += static_cast<unsigned __int128>(elements) *
             ((2 + static_cast<uint64_t>(training.prefetch)) * DtypeBytes(param.dtype) + 2 * grad + per_state);
    if (bound >= kHalf) break;
  }
  std::optional<uint64_t> activations = 0;
  if (training.activations) {
    ActivationSettings one_device = *training.activations;
    one_device.recompute = Recompute::kNone;  // the most any setting keeps
    activations = ActivationBytes(*training.model, one_device, 1);
  }
  if (bound >= kHalf || !activations || *activations >= kHalf) {
    return DocumentError{"the training memory of this document could exceed 2^63 - 1 bytes on a device", "/training"};
  }
  return std::nullopt;
}

}  // namespace shardplan

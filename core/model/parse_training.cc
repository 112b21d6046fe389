// Parsing the `training` section (training-v1 section 1, docs/format.md):
// the values' types and spellings here, the checks that need the rest of
// the document in training.h's CompleteTraining.
#include <array>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/model/parse.h"
#include "core/model/parser.h"
#include "core/model/training.h"
#include "core/text/pyrepr.h"

namespace shardplan::parse_internal {

bool Parser::IntField(const Value* v, std::string_view key, int64_t low, int64_t high, int64_t& out) {
  if (v == nullptr) return true;
  At at(*this, key);
  if (!v->IsInt64() || v->GetInt64() < low || v->GetInt64() > high) {
    return Fail(absl::StrCat("'", key, "' must be an integer from ", low, " to ",
                             high == (int64_t{1} << 31) - 1 ? std::string("2^31 - 1") : absl::StrCat(high)));
  }
  out = v->GetInt64();
  return true;
}

bool Parser::BoolField(const Value* v, std::string_view key, bool& out) {
  if (v == nullptr) return true;
  At at(*this, key);
  if (!Expect(*v, v->IsBool(), "true or false")) return false;
  out = v->GetBool();
  return true;
}

bool Parser::DtypeField(const Value* v, std::string_view key, bool nullable, std::optional<Dtype>& out) {
  if (v == nullptr || (nullable && v->IsNull())) return true;
  At at(*this, key);
  if (!ExpectString(*v)) return false;
  out = ParseDtype(Str(*v));
  return out.has_value() || Fail(UnknownDtypeMessage(Str(*v)));
}

bool Parser::Patterns(const Value* v, std::string_view key, std::vector<TrainingPattern>& out) {
  if (v == nullptr) return true;
  At at(*this, key);
  if (!ExpectArray(*v)) return false;
  for (size_t i = 0; i < v->Size(); ++i) {
    At at_pattern(*this, i);
    if (!ExpectString((*v)[i])) return false;
    out.push_back({std::string(Str((*v)[i])), Pointer()});
  }
  return true;
}

bool Parser::ParseTraining(const Value& v) {
  enum {
    kZero,
    kShardAxes,
    kOptimizer,
    kOptimizerDtype,
    kMasterDtype,
    kGradDtype,
    kFrozen,
    kFsdpUnits,
    kPrefetch,
    kActivations,
    kDeviceMemory,
    kHeadroom,
    kModel,
    kCount
  };
  static constexpr std::array<std::string_view, kCount> kKeys = {
      "zero",        "shard_axes",    "optimizer", "optimizer_dtype", "master_dtype", "grad_dtype", "frozen",
      "fsdp_units",  "prefetch",      "activations", "device_memory", "headroom",   "model"};
  Fields<kCount> f;
  if (!ReadFields(v, kKeys, f)) return false;
  Training& training = doc_.training.emplace();

  int64_t zero = 0;
  if (!IntField(f[kZero], "zero", 0, 3, zero)) return false;
  training.zero = static_cast<int>(zero);
  if (const Value* axes = f[kShardAxes]) {
    At at(*this, "shard_axes");
    if (!ExpectArray(*axes)) return false;
    for (size_t i = 0; i < axes->Size(); ++i) {
      At at_axis(*this, i);
      if (!ExpectString((*axes)[i])) return false;
      training.shard_axes.push_back(doc_.names.Intern(Str((*axes)[i])));
    }
  }
  if (const Value* optimizer = f[kOptimizer]) {
    At at(*this, "optimizer");
    if (!ExpectString(*optimizer)) return false;
    const std::optional<Optimizer> found = ParseOptimizer(Str(*optimizer));
    if (!found) {
      return Fail(absl::StrCat("unknown optimizer ", PyRepr(Str(*optimizer)),
                               " (expected adamw, adam, momentum, sgd or none)"));
    }
    training.optimizer = *found;
  }
  std::optional<Dtype> optimizer_dtype;
  if (!DtypeField(f[kOptimizerDtype], "optimizer_dtype", /*nullable=*/false, optimizer_dtype) ||
      !DtypeField(f[kMasterDtype], "master_dtype", /*nullable=*/true, training.master_dtype) ||
      !DtypeField(f[kGradDtype], "grad_dtype", /*nullable=*/true, training.grad_dtype)) {
    return false;
  }
  if (optimizer_dtype) training.optimizer_dtype = *optimizer_dtype;
  if (!Patterns(f[kFrozen], "frozen", training.frozen) || !Patterns(f[kFsdpUnits], "fsdp_units", training.fsdp_units) ||
      !IntField(f[kPrefetch], "prefetch", 0, kMaxPrefetch, training.prefetch)) {
    return false;
  }
  if (const Value* memory = f[kDeviceMemory]) {
    At at(*this, "device_memory");
    std::optional<uint64_t> bytes;
    if (memory->IsInt64() && memory->GetInt64() >= 1) {
      bytes = static_cast<uint64_t>(memory->GetInt64());
    } else if (memory->IsString()) {
      bytes = ParseByteSize(Str(*memory));
    }
    if (!bytes) {
      return Fail("device_memory must be a number of bytes from 1 to 2^63 - 1, or a string such as \"80GiB\" "
                  "(units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
    }
    training.device_memory = *bytes;
  }
  if (const Value* headroom = f[kHeadroom]) {
    At at(*this, "headroom");
    if (!headroom->IsNumber() || !(headroom->GetDouble() > 0 && headroom->GetDouble() <= 1)) {
      return Fail("headroom must be a number greater than 0 and at most 1");
    }
    training.headroom = headroom->GetDouble();
  }
  if (f[kModel]) {
    At at(*this, "model");
    if (!ParseModelDescription(*f[kModel], training.model.emplace())) return false;
  }
  if (f[kActivations] && !f[kActivations]->IsNull()) {
    At at(*this, "activations");
    if (!ParseActivations(*f[kActivations], training.activations.emplace(), training.tensor_axis_given)) {
      return false;
    }
  }
  training.shard_axes_given = f[kShardAxes] != nullptr;
  return true;
}

bool Parser::ParseTrainingSection(const Value& v) {
  At at(*this, "training");
  return ParseTraining(v);
}

bool Parser::ParseActivations(const Value& v, ActivationSettings& out, bool& tensor_axis_given) {
  enum { kMicroBatch, kSeqLen, kRecompute, kTensorAxis, kSequenceParallel, kCount };
  static constexpr std::array<std::string_view, kCount> kKeys = {"micro_batch", "seq_len", "recompute", "tensor_axis",
                                                                 "sequence_parallel"};
  Fields<kCount> f;
  if (!ReadFields(v, kKeys, f) || !Required(f[kSeqLen], "seq_len")) return false;
  if (!IntField(f[kMicroBatch], "micro_batch", 1, kMaxModelValue, out.micro_batch) ||
      !IntField(f[kSeqLen], "seq_len", 1, kMaxModelValue, out.seq_len) ||
      !BoolField(f[kSequenceParallel], "sequence_parallel", out.sequence_parallel)) {
    return false;
  }
  if (const Value* recompute = f[kRecompute]) {
    At at(*this, "recompute");
    if (!ExpectString(*recompute)) return false;
    const std::optional<Recompute> found = ParseRecompute(Str(*recompute));
    if (!found) {
      return Fail(absl::StrCat("unknown recompute ", PyRepr(Str(*recompute)), " (expected none, selective or full)"));
    }
    out.recompute = *found;
  }
  if (const Value* axis = f[kTensorAxis]) {
    At at(*this, "tensor_axis");
    tensor_axis_given = true;
    if (!axis->IsNull()) {
      if (!Expect(*axis, axis->IsString(), "a string or null")) return false;
      out.tensor_axis = doc_.names.Intern(Str(*axis));
    }
  }
  return true;
}

bool Parser::ParseModelDescription(const Value& v, ModelDescription& out) {
  enum {
    kHidden,
    kHeads,
    kKvHeads,
    kHeadDim,
    kIntermediate,
    kGated,
    kLayers,
    kVocab,
    kExperts,
    kPerToken,
    kMoeIntermediate,
    kShared,
    kDense,
    kCount
  };
  static constexpr std::array<std::string_view, kCount> kKeys = {
      "hidden_size",         "num_attention_heads",   "num_key_value_heads", "head_dim",
      "intermediate_size",   "gated_mlp",             "num_hidden_layers",   "vocab_size",
      "num_experts",         "num_experts_per_tok",   "moe_intermediate_size", "num_shared_experts",
      "first_k_dense_replace"};
  Fields<kCount> f;
  if (!ReadFields(v, kKeys, f)) return false;
  for (int k : {kHidden, kHeads, kIntermediate, kLayers, kVocab}) {
    if (!Required(f[k], kKeys[k])) return false;
  }
  // 0 stands for "not given" in the fields whose default depends on others
  // (training.h's CompleteTraining fills them), so given values are >= 1.
  const std::array<std::pair<int, int64_t*>, kCount - 1> ints = {{
      {kHidden, &out.hidden_size},
      {kHeads, &out.num_attention_heads},
      {kKvHeads, &out.num_key_value_heads},
      {kHeadDim, &out.head_dim},
      {kIntermediate, &out.intermediate_size},
      {kLayers, &out.num_hidden_layers},
      {kVocab, &out.vocab_size},
      {kExperts, &out.num_experts},
      {kPerToken, &out.num_experts_per_tok},
      {kMoeIntermediate, &out.moe_intermediate_size},
      {kShared, &out.num_shared_experts},
      {kDense, &out.first_k_dense_replace},
  }};
  for (const auto& [k, field] : ints) {
    const int64_t low = (k == kExperts || k == kShared || k == kDense) ? 0 : 1;
    if (!IntField(f[k], kKeys[k], low, kMaxModelValue, *field)) return false;
  }
  return BoolField(f[kGated], "gated_mlp", out.gated_mlp);
}

}  // namespace shardplan::parse_internal

namespace shardplan {

std::optional<DocumentError> ParseTrainingSection(Document& doc, std::string_view json, const Limits& limits) {
  json::Reader reader(json, limits.max_json_depth);
  json::Value value;
  reader.SkipSpace();
  bool read = reader.ReadValue(value, 0);
  if (read) {
    reader.SkipSpace();
    if (reader.Peek() != '\0' || reader.offset() != json.size()) read = reader.Fail(json::Error::kRootNotSingular);
  }
  if (!read) {
    return DocumentError{absl::StrCat("malformed JSON at offset ", reader.error_offset(), " of the training section: ",
                                      json::ErrorMessage(reader.error())),
                         "/training"};
  }
  parse_internal::Parser parser(doc, limits, 0);
  if (parser.ParseTrainingSection(value)) return std::nullopt;
  return DocumentError{parser.error(), parser.error_pointer(), parser.error_fix_it()};
}

}  // namespace shardplan

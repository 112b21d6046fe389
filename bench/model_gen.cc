#include "bench/model_gen.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

// Modules are described with designated initializers that name only the
// fields they set; the others keep their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace shardplan::bench {
namespace {

// splitmix64: tiny, fast, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform enough in [0, n) for n far below 2^64 (modulo bias < n / 2^64).
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

void AppendInt(std::string& s, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, end);
}

std::string Int(int64_t v) {
  std::string s;
  AppendInt(s, v);
  return s;
}

void AppendQuoted(std::string& s, std::string_view text) {
  s.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"': s += "\\\""; break;
      case '\\': s += "\\\\"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char kHex[] = "0123456789abcdef";
          s += "\\u00";
          s.push_back(kHex[(c >> 4) & 0xf]);
          s.push_back(kHex[c & 0xf]);
        } else {
          s.push_back(c);
        }
    }
  }
  s.push_back('"');
}

// A compact JSON writer over one string: objects and arrays keep a "first
// member" flag each so that commas come out right.
class Json {
 public:
  explicit Json(std::string& out) : s_(out) {}
  void BeginObject() { s_.push_back('{'); first_.push_back(true); }
  void EndObject() { s_.push_back('}'); first_.pop_back(); }
  void BeginArray() { s_.push_back('['); first_.push_back(true); }
  void EndArray() { s_.push_back(']'); first_.pop_back(); }
  // Starts an object member; the value follows.
  void Key(std::string_view key) {
    Item();
    AppendQuoted(s_, key);
    s_.push_back(':');
  }
  // Starts an array element; the value follows.
  void Item() {
    if (!first_.back()) s_.push_back(',');
    first_.back() = false;
  }
  void String(std::string_view v) { AppendQuoted(s_, v); }
  void Integer(int64_t v) { AppendInt(s_, v); }
  void Raw(std::string_view json) { s_.append(json); }
  void KeyRaw(std::string_view key, std::string_view json) { Key(key); Raw(json); }
  void KeyString(std::string_view key, std::string_view v) { Key(key); String(v); }

 private:
  std::string& s_;
  std::vector<bool> first_;
};

// --- mesh and placements ----------------------------------------------------

enum class Role {
  kColumn,      // tp: S(0), every other axis R
  kRow,         // tp: S(1), every other axis R
  kReplicated,  // R on every axis
  kActivation,  // dp: S(0), every other axis R
  kPartial,     // dp: S(0), tp: P, every other axis R
};

std::string Placements(const std::vector<MeshAxisSpec>& mesh, Role role) {
  std::string s;
  Json j(s);
  j.BeginObject();
  for (const MeshAxisSpec& axis : mesh) {
    std::string_view p = "R";
    if (axis.name == "tp") {
      if (role == Role::kColumn) p = "S(0)";
      if (role == Role::kRow) p = "S(1)";
      if (role == Role::kPartial) p = "P";
    } else if (axis.name == "dp") {
      if (role == Role::kActivation || role == Role::kPartial) p = "S(0)";
    }
    j.KeyString(axis.name, p);
  }
  j.EndObject();
  return s;
}

// {"binding_kind": kind, "axes": [the wanted axes that are mesh axes]}; an
// empty `wanted` means every mesh axis.
std::string ParallelSpec(const std::vector<MeshAxisSpec>& mesh, std::string_view kind,
                         const std::vector<std::string>& wanted) {
  std::string s;
  Json j(s);
  j.BeginObject();
  j.KeyString("binding_kind", kind);
  j.Key("axes");
  j.BeginArray();
  for (const MeshAxisSpec& axis : mesh) {
    bool use = wanted.empty();
    for (const std::string& w : wanted) use = use || w == axis.name;
    if (use) {
      j.Item();
      j.String(axis.name);
    }
  }
  j.EndArray();
  j.EndObject();
  return s;
}

using Entries = std::vector<std::pair<std::string, std::string>>;  // name -> raw JSON

// A layout: params, in_src = in_dst, and out_src/out_dst when given.
std::string Layout(const Entries& params, const Entries& inputs, const Entries& out_src = {},
                   const Entries& out_dst = {}) {
  std::string s;
  Json j(s);
  auto map = [&j](std::string_view key, const Entries& entries) {
    j.Key(key);
    j.BeginObject();
    for (const auto& [name, raw] : entries) j.KeyRaw(name, raw);
    j.EndObject();
  };
  j.BeginObject();
  map("params", params);
  map("in_src", inputs);
  map("in_dst", inputs);
  if (!out_src.empty()) map("out_src", out_src);
  if (!out_dst.empty()) map("out_dst", out_dst);
  j.EndObject();
  return s;
}

// --- document builder -------------------------------------------------------

struct ModuleSpec {
  std::string_view type;
  const std::vector<std::string>* forward = nullptr;
  Entries children;  // child name -> module id (plain strings, quoted on output)
  Entries params;    // param name -> param id
  std::string parallel;  // raw JSON or empty
  std::string family;    // raw JSON or empty
};

class DocBuilder {
 public:
  explicit DocBuilder(const std::vector<MeshAxisSpec>& mesh) : mesh_(mesh), params_(params_text_), modules_(modules_text_) {
    params_.BeginObject();
    modules_.BeginObject();
  }

  void Param(std::string_view id, std::initializer_list<int64_t> shape, std::string_view dtype) {
    params_.Key(id);
    params_.BeginObject();
    params_.Key("shape");
    params_.BeginArray();
    for (int64_t d : shape) {
      params_.Item();
      params_.Integer(d);
    }
    params_.EndArray();
    // float32 is the default dtype: leave it out, as real exporters often do.
    if (dtype != "float32") params_.KeyString("dtype", dtype);
    params_.EndObject();
  }

  void Module(std::string_view id, const ModuleSpec& m) {
    modules_.Key(id);
    modules_.BeginObject();
    modules_.KeyString("type", m.type);
    if (m.forward != nullptr) {
      modules_.Key("forward");
      modules_.BeginArray();
      for (const std::string& f : *m.forward) {
        modules_.Item();
        modules_.String(f);
      }
      modules_.EndArray();
    }
    auto names = [this](std::string_view key, const Entries& entries) {
      if (entries.empty()) return;
      modules_.Key(key);
      modules_.BeginObject();
      for (const auto& [name, id] : entries) modules_.KeyString(name, id);
      modules_.EndObject();
    };
    names("children", m.children);
    names("params", m.params);
    if (!m.parallel.empty()) modules_.KeyRaw("parallel", m.parallel);
    if (!m.family.empty()) modules_.KeyRaw("family", m.family);
    modules_.EndObject();
  }

  void Provider(std::string fqn, std::string layout) { providers_.emplace_back(std::move(fqn), std::move(layout)); }
  void Native(std::string request) { native_.push_back(std::move(request)); }
  void PlanEntry(std::string fqn, std::string layout) { plan_.emplace_back(std::move(fqn), std::move(layout)); }

  std::string Finish(std::string_view root, bool with_plan) {
    params_.EndObject();
    modules_.EndObject();
    std::string s;
    s.reserve(params_text_.size() + modules_text_.size() + 4096);
    Json j(s);
    j.BeginObject();
    j.KeyString("schema", "shardplan.v1");
    j.Key("mesh");
    j.BeginObject();
    for (const MeshAxisSpec& axis : mesh_) {
      j.Key(axis.name);
      j.Integer(axis.size);
    }
    j.EndObject();
    j.KeyRaw("parameters", params_text_);
    std::string().swap(params_text_);
    j.KeyString("root", root);
    j.KeyRaw("modules", modules_text_);
    std::string().swap(modules_text_);
    if (!providers_.empty() || !native_.empty()) {
      j.Key("providers");
      j.BeginObject();
      if (!providers_.empty()) {
        j.Key("sharding");
        j.BeginObject();
        for (const auto& [fqn, layout] : providers_) j.KeyRaw(fqn, layout);
        j.EndObject();
      }
      if (!native_.empty()) {
        j.Key("native");
        j.BeginArray();
        for (const std::string& request : native_) {
          j.Item();
          j.Raw(request);
        }
        j.EndArray();
      }
      j.EndObject();
    }
    if (with_plan) {
      j.Key("plan");
      j.BeginObject();
      j.Key("modules");
      j.BeginObject();
      for (const auto& [fqn, layout] : plan_) j.KeyRaw(fqn, layout);
      j.EndObject();
      j.EndObject();
    }
    j.EndObject();
    return s;
  }

 private:
  const std::vector<MeshAxisSpec>& mesh_;
  std::string params_text_;
  std::string modules_text_;
  Json params_;
  Json modules_;
  Entries providers_;
  std::vector<std::string> native_;
  Entries plan_;
};

std::string NativeRequest(const std::vector<std::string>& patterns, const std::string& layout,
                          const std::string& parallel) {
  std::string s;
  Json j(s);
  j.BeginObject();
  j.Key("match");
  j.BeginArray();
  for (const std::string& p : patterns) {
    j.Item();
    j.String(p);
  }
  j.EndArray();
  j.KeyRaw("sharding", layout);
  j.KeyRaw("parallel", parallel.empty() ? "null" : parallel);
  j.EndObject();
  return s;
}

std::string Family(const std::string& layout) {
  return R"({"parallel":true,"cached":null,"sharding":)" + layout + "}";
}

// Character-set patterns matching exactly the decimal indexes 0..count-1 after
// `prefix.`: "[0-9]", "[0-9][0-9]", ... one per number of digits used.
std::vector<std::string> IndexPatterns(std::string_view prefix, int64_t count) {
  std::vector<std::string> out;
  int64_t low = 0;  // smallest index with `digits` digits
  for (int digits = 1; low < count; ++digits) {
    std::string p = std::string(prefix) + ".";
    for (int i = 0; i < digits; ++i) p += "[0-9]";
    out.push_back(std::move(p));
    low = low == 0 ? 10 : low * 10;
  }
  return out;
}

// --- deepseek ---------------------------------------------------------------

std::string GenerateDeepseek(const GenOptions& o, const std::vector<MeshAxisSpec>& mesh) {
  // DeepSeek-V3 dimensions.
  constexpr int64_t kHidden = 7168, kQLora = 1536, kKvLora = 512, kRope = 64, kHeads = 128, kNope = 128,
                    kV = 128, kInter = 18432, kMoeInter = 2048, kVocab = 129280;
  const int layers = o.layers, experts = o.experts;
  const int dense = std::min(o.dense_layers, o.layers);
  DocBuilder b(mesh);

  const std::string col = Placements(mesh, Role::kColumn), row = Placements(mesh, Role::kRow),
                    rep = Placements(mesh, Role::kReplicated), act = Placements(mesh, Role::kActivation),
                    partial = Placements(mesh, Role::kPartial);
  const std::string tp = ParallelSpec(mesh, "tp", {"tp"});
  const std::string ep = ParallelSpec(mesh, "ep", {"ep"});

  const std::vector<std::string> fwd_input = {"input"}, fwd_x = {"x"}, fwd_hidden = {"hidden_states"},
                                 fwd_layer = {"hidden_states", "attention_mask", "position_ids", "past_key_value",
                                              "**kwargs"},
                                 fwd_model = {"input_ids", "attention_mask", "position_ids", "**kwargs"};

  const std::string embed_layout = Layout({{"weight", col}}, {{"input", act}});
  const std::string head_layout = Layout({{"weight", col}}, {{"input", act}});
  const std::string head_reduced = Layout({}, {{"input", act}});
  const std::string attn_layout =
      Layout({{"q_a_proj.weight", rep},
              {"q_a_layernorm.weight", rep},
              {"q_b_proj.weight", col},
              {"kv_a_proj_with_mqa.weight", rep},
              {"kv_a_layernorm.weight", rep},
              {"kv_b_proj.weight", col},
              {"o_proj.weight", row}},
             {{"hidden_states", act}}, {{"attn_output", partial}}, {{"attn_output", act}});
  const std::string mlp_layout = Layout({{"gate_proj.weight", col}, {"up_proj.weight", col}, {"down_proj.weight", row}},
                                        {{"x", act}}, {{"down_proj", partial}}, {{"down_proj", act}});
  const std::string gate_layout =
      Layout({{"weight", rep}, {"e_score_correction_bias", rep}}, {{"hidden_states", act}});
  const std::string norm_layout = Layout({{"weight", rep}}, {{"hidden_states", act}});

  // Module ids are compact ("m" + creation number, children numbered when
  // their parent is written); parameter ids are the parameters' full names.
  int64_t next_id = 0;
  auto new_id = [&next_id] { return "m" + Int(next_id++); };
  auto linear = [&](const std::string& fqn, const std::string& id, std::initializer_list<int64_t> shape) {
    const std::string pid = fqn + ".weight";
    b.Param(pid, shape, "bfloat16");
    b.Module(id, {.type = "Linear", .forward = &fwd_input, .params = {{"weight", pid}}});
  };
  auto norm = [&](const std::string& fqn, const std::string& id, int64_t dim) {
    const std::string pid = fqn + ".weight";
    b.Param(pid, {dim}, "bfloat16");
    b.Module(id, {.type = "DeepseekV3RMSNorm", .forward = &fwd_hidden, .params = {{"weight", pid}}});
  };
  auto mlp = [&](const std::string& fqn, const std::string& id, int64_t inter, bool declares_tp) {
    const std::string gate = new_id(), up = new_id(), down = new_id();
    b.Module(id, {.type = "DeepseekV3MLP",
                  .forward = &fwd_x,
                  .children = {{"gate_proj", gate}, {"up_proj", up}, {"down_proj", down}},
                  .parallel = declares_tp ? tp : std::string()});
    linear(fqn + ".gate_proj", gate, {inter, kHidden});
    linear(fqn + ".up_proj", up, {inter, kHidden});
    linear(fqn + ".down_proj", down, {kHidden, inter});
  };

  // Root, embedding (its weight tied with lm_head's), the ModuleList.
  const std::string root = new_id(), embed_id = new_id(), layers_id = new_id(), norm_id = new_id(),
                    head_id = new_id();
  std::vector<std::string> layer_ids;
  Entries layer_children;
  for (int i = 0; i < layers; ++i) {
    layer_ids.push_back(new_id());
    layer_children.emplace_back(Int(i), layer_ids.back());
  }
  b.Module(root, {.type = "DeepseekV3ForCausalLM",
                  .forward = &fwd_model,
                  .children = {{"embed_tokens", embed_id}, {"layers", layers_id}, {"norm", norm_id},
                               {"lm_head", head_id}}});
  b.Param("embed_tokens.weight", {kVocab, kHidden}, "bfloat16");
  b.Module(embed_id, {.type = "Embedding", .forward = &fwd_input, .params = {{"weight", "embed_tokens.weight"}},
                      .parallel = tp});
  b.Module(layers_id, {.type = "ModuleList", .children = std::move(layer_children)});
  b.Provider("embed_tokens", embed_layout);
  b.Provider("lm_head", head_layout);
  b.PlanEntry("embed_tokens", embed_layout);
  b.PlanEntry("lm_head", head_reduced);  // the tied weight stays with embed_tokens

  std::vector<std::string> gate_plan, expert_plan;
  for (int i = 0; i < layers; ++i) {
    const std::string layer = "layers." + Int(i);
    const bool moe = i >= dense;
    const std::string attn_id = new_id(), mlp_id = new_id(), in_norm = new_id(), post_norm = new_id();
    b.Module(layer_ids[i], {.type = "DeepseekV3DecoderLayer",
                            .forward = &fwd_layer,
                            .children = {{"self_attn", attn_id},
                                         {"mlp", mlp_id},
                                         {"input_layernorm", in_norm},
                                         {"post_attention_layernorm", post_norm}}});
    // Attention (multi-head latent attention): a parallel family member.
    const std::string attn = layer + ".self_attn";
    std::string ids[7];
    for (std::string& id : ids) id = new_id();
    b.Module(attn_id, {.type = "DeepseekV3Attention",
                       .forward = &fwd_layer,
                       .children = {{"q_a_proj", ids[0]},
                                    {"q_a_layernorm", ids[1]},
                                    {"q_b_proj", ids[2]},
                                    {"kv_a_proj_with_mqa", ids[3]},
                                    {"kv_a_layernorm", ids[4]},
                                    {"kv_b_proj", ids[5]},
                                    {"o_proj", ids[6]}},
                       .parallel = tp,
                       .family = Family(attn_layout)});
    linear(attn + ".q_a_proj", ids[0], {kQLora, kHidden});
    norm(attn + ".q_a_layernorm", ids[1], kQLora);
    linear(attn + ".q_b_proj", ids[2], {kHeads * (kNope + kRope), kQLora});
    linear(attn + ".kv_a_proj_with_mqa", ids[3], {kKvLora + kRope, kHidden});
    norm(attn + ".kv_a_layernorm", ids[4], kKvLora);
    linear(attn + ".kv_b_proj", ids[5], {kHeads * (kNope + kV), kKvLora});
    linear(attn + ".o_proj", ids[6], {kHidden, kHeads * kV});

    const std::string m = layer + ".mlp";
    if (!moe) {
      mlp(m, mlp_id, kInter, /*declares_tp=*/true);
      b.Provider(m, mlp_layout);
      b.PlanEntry(m, mlp_layout);
    } else {
      const std::string experts_id = new_id(), gate_id = new_id(), shared_id = new_id();
      b.Module(mlp_id, {.type = "DeepseekV3MoE",
                        .forward = &fwd_hidden,
                        .children = {{"experts", experts_id}, {"gate", gate_id}, {"shared_experts", shared_id}}});
      Entries expert_children;
      expert_children.reserve(experts);
      for (int e = 0; e < experts; ++e) expert_children.emplace_back(Int(e), new_id());
      b.Module(experts_id, {.type = "ModuleList", .children = expert_children});
      for (int e = 0; e < experts; ++e) {
        const std::string expert = m + ".experts." + Int(e);
        mlp(expert, expert_children[e].second, kMoeInter, /*declares_tp=*/false);
        expert_plan.push_back(expert);
      }
      const std::string gate = m + ".gate";
      b.Param(gate + ".weight", {experts, kHidden}, "bfloat16");
      b.Param(gate + ".e_score_correction_bias", {experts}, "float32");
      b.Module(gate_id, {.type = "MoEGate",
                         .forward = &fwd_hidden,
                         .params = {{"weight", gate + ".weight"},
                                    {"e_score_correction_bias", gate + ".e_score_correction_bias"}}});
      gate_plan.push_back(gate);
      mlp(m + ".shared_experts", shared_id, kMoeInter, /*declares_tp=*/true);
      b.Provider(m + ".shared_experts", mlp_layout);
      b.PlanEntry(m + ".shared_experts", mlp_layout);
    }
    norm(layer + ".input_layernorm", in_norm, kHidden);
    norm(layer + ".post_attention_layernorm", post_norm, kHidden);
  }
  norm("norm", norm_id, kHidden);
  b.Module(head_id, {.type = "Linear", .forward = &fwd_input, .params = {{"weight", "embed_tokens.weight"}},
                     .parallel = tp});

  for (int i = 0; i < layers; ++i) b.PlanEntry("layers." + Int(i) + ".self_attn", attn_layout);

  // Native requests: the experts (one request, one pattern per index width),
  // the router gates, the norms.
  if (layers > dense) {
    b.Native(NativeRequest(IndexPatterns("layers.*.mlp.experts", experts), mlp_layout, ep));
    b.Native(NativeRequest({"layers.*.mlp.gate"}, gate_layout, ""));
  }
  b.Native(NativeRequest({"layers.*.input_layernorm", "layers.*.post_attention_layernorm", "norm"}, norm_layout, ""));
  for (const std::string& e : expert_plan) b.PlanEntry(e, mlp_layout);
  for (const std::string& g : gate_plan) b.PlanEntry(g, gate_layout);
  for (int i = 0; i < layers; ++i) b.PlanEntry("layers." + Int(i) + ".input_layernorm", norm_layout);
  for (int i = 0; i < layers; ++i) b.PlanEntry("layers." + Int(i) + ".post_attention_layernorm", norm_layout);
  b.PlanEntry("norm", norm_layout);
  return b.Finish(root, o.plan);
}


// --- generic ----------------------------------------------------------------

std::string GenerateGeneric(const GenOptions& o, const std::vector<MeshAxisSpec>& mesh) {
  static constexpr std::string_view kDtypes[] = {"bfloat16", "float16", "float32", "float8_e4m3fn"};
  Rng rng(o.seed ^ 0x67656e6572696331ULL);
  const int64_t n = o.params;
  const int64_t width = o.width;
  const int64_t blocks = (n + width - 1) / width;
  int64_t to_own = GenericOwnerCount(o);
  DocBuilder b(mesh);

  const std::string layout = Layout({{"weight", Placements(mesh, Role::kColumn)}},
                                    {{"input", Placements(mesh, Role::kActivation)}},
                                    {{"output", Placements(mesh, Role::kPartial)}},
                                    {{"output", Placements(mesh, Role::kActivation)}});
  const std::string parallel = ParallelSpec(mesh, "tp", {});  // every mesh axis
  const std::vector<std::string> fwd_x = {"x"}, fwd_input = {"input"};

  Entries block_children;
  block_children.reserve(blocks);
  for (int64_t i = 0; i < blocks; ++i) block_children.emplace_back(Int(i), "b" + Int(i));
  b.Module("model", {.type = "GenericModel", .forward = &fwd_x, .children = {{"blocks", "blocks"}}});
  b.Module("blocks", {.type = "ModuleList", .children = std::move(block_children)});

  bool any_native = false;
  for (int64_t i = 0; i < blocks; ++i) {
    const std::string block = "b" + Int(i);
    const int64_t count = std::min(width, n - i * width);
    // Draw everything about this block's Linears first, then write them.
    struct Lin {
      bool owned, native;
      int64_t rows, cols;
      std::string_view dtype;
    };
    std::vector<Lin> lins(count);
    Entries children;
    for (int64_t j = 0; j < count; ++j) {
      Lin& l = lins[j];
      const int64_t g = i * width + j;  // global index; selection sampling keeps exactly to_own
      l.owned = to_own > 0 && static_cast<int64_t>(rng.Below(static_cast<uint64_t>(n - g))) < to_own;
      if (l.owned) --to_own;
      l.native = l.owned && (o.owner_style == OwnerStyle::kNative ||
                             (o.owner_style == OwnerStyle::kMixed && (rng.Next() & 1) != 0));
      l.rows = 256 * static_cast<int64_t>(1 + rng.Below(32));
      l.cols = 256 * static_cast<int64_t>(1 + rng.Below(32));
      l.dtype = kDtypes[rng.Below(4)];
      children.emplace_back((l.native ? "w" : "lin") + Int(j), block + "." + Int(j));
    }
    b.Module(block, {.type = "Block", .forward = &fwd_x, .children = children});
    for (int64_t j = 0; j < count; ++j) {
      const Lin& l = lins[j];
      const std::string id = block + "." + Int(j);
      const std::string pid = "p" + id.substr(1);
      b.Param(pid, {l.rows, l.cols}, l.dtype);
      b.Module(id, {.type = "Linear",
                    .forward = &fwd_input,
                    .params = {{"weight", pid}},
                    .parallel = l.owned ? parallel : std::string()});
      if (!l.owned) continue;
      const std::string fqn = "blocks." + Int(i) + "." + children[j].first;
      if (l.native) {
        any_native = true;
      } else {
        b.Provider(fqn, layout);
      }
      b.PlanEntry(fqn, layout);
    }
  }
  if (any_native) b.Native(NativeRequest({"blocks.*.w*"}, layout, parallel));
  return b.Finish("model", o.plan);
}

// --- shared -----------------------------------------------------------------

std::string GenerateShared(const GenOptions& o, const std::vector<MeshAxisSpec>& mesh) {
  constexpr int64_t kHidden = 1024, kInter = 4096, kVocab = 32000;
  Rng rng(o.seed ^ 0x7368617265643031ULL);
  const int paths = o.paths, distinct = o.blocks;
  DocBuilder b(mesh);

  const std::string col = Placements(mesh, Role::kColumn), row = Placements(mesh, Role::kRow),
                    rep = Placements(mesh, Role::kReplicated), act = Placements(mesh, Role::kActivation),
                    partial = Placements(mesh, Role::kPartial);
  const std::string tp = ParallelSpec(mesh, "tp", {"tp"});
  const std::vector<std::string> fwd_input = {"input"}, fwd_x = {"x"}, fwd_hidden = {"hidden_states"},
                                 fwd_block = {"x", "**kwargs"}, fwd_attn = {"hidden_states", "**kwargs"},
                                 fwd_model = {"input_ids", "**kwargs"};
  const std::string embed_layout = Layout({{"weight", col}}, {{"input", act}});
  const std::string head_reduced = Layout({}, {{"input", act}});
  const std::string attn_layout =
      Layout({{"q.weight", col}, {"k.weight", col}, {"v.weight", col}, {"o.weight", row}}, {{"hidden_states", act}},
             {{"attn_output", partial}}, {{"attn_output", act}});
  const std::string mlp_layout =
      Layout({{"up.weight", col}, {"down.weight", row}}, {{"x", act}}, {{"out", partial}}, {{"out", act}});
  const std::string norm_layout = Layout({{"weight", rep}}, {{"hidden_states", act}});
  const std::string norm_reduced = Layout({}, {{"hidden_states", act}});
  const std::string proj_layout = Layout({{"weight", rep}}, {{"input", act}});

  auto linear = [&](const std::string& id, std::initializer_list<int64_t> shape) {
    b.Param(id + ".weight", shape, "bfloat16");
    b.Module(id, {.type = "Linear", .forward = &fwd_input, .params = {{"weight", id + ".weight"}}});
  };

  Entries slots;
  slots.reserve(paths);
  for (int i = 0; i < paths; ++i) {
    const int64_t d = i < distinct ? i : static_cast<int64_t>(rng.Below(static_cast<uint64_t>(distinct)));
    slots.emplace_back(Int(i), "blk" + Int(d));
  }
  b.Module("model", {.type = "SharedModel",
                     .forward = &fwd_model,
                     .children = {{"embed_tokens", "emb"}, {"layers", "layers"}, {"norm", "final_norm"},
                                  {"lm_head", "head"}}});
  b.Param("embed", {kVocab, kHidden}, "bfloat16");
  b.Module("emb", {.type = "Embedding", .forward = &fwd_input, .params = {{"weight", "embed"}}, .parallel = tp});
  b.Module("layers", {.type = "ModuleList", .children = std::move(slots)});
  b.Param("norm_w", {kHidden}, "float32");  // tied across every block's norm
  linear("sproj", {kHidden, kHidden});      // one module at every slot
  b.Module("act", {.type = "SiLU", .forward = &fwd_input});
  for (int d = 0; d < distinct; ++d) {
    const std::string ds = Int(d);
    const std::string attn = "attn" + ds, mlp = "mlp" + ds;
    b.Module("blk" + ds, {.type = "Block",
                          .forward = &fwd_block,
                          .children = {{"attn", attn}, {"mlp", mlp}, {"norm", "norm" + ds}, {"proj", "sproj"},
                                       {"act", "act"}}});
    b.Module(attn, {.type = "Attention",
                    .forward = &fwd_attn,
                    .children = {{"q", attn + ".q"}, {"k", attn + ".k"}, {"v", attn + ".v"}, {"o", attn + ".o"}},
                    .parallel = tp,
                    .family = Family(attn_layout)});
    linear(attn + ".q", {kHidden, kHidden});
    linear(attn + ".k", {kHidden, kHidden});
    linear(attn + ".v", {kHidden, kHidden});
    linear(attn + ".o", {kHidden, kHidden});
    b.Module(mlp, {.type = "MLP",
                   .forward = &fwd_x,
                   .children = {{"up", mlp + ".up"}, {"down", mlp + ".down"}},
                   .parallel = tp});
    linear(mlp + ".up", {kInter, kHidden});
    linear(mlp + ".down", {kHidden, kInter});
    b.Module("norm" + ds, {.type = "RMSNorm", .forward = &fwd_hidden, .params = {{"weight", "norm_w"}}});
  }
  b.Param("final_norm.weight", {kHidden}, "float32");
  b.Module("final_norm", {.type = "RMSNorm", .forward = &fwd_hidden, .params = {{"weight", "final_norm.weight"}}});
  b.Module("head", {.type = "Linear", .forward = &fwd_input, .params = {{"weight", "embed"}}, .parallel = tp});

  // Owners. Slot d < blocks is the first path of block d.
  b.Provider("embed_tokens", embed_layout);
  b.Provider("lm_head", embed_layout);
  b.PlanEntry("embed_tokens", embed_layout);
  b.PlanEntry("lm_head", head_reduced);
  for (int d = 0; d < distinct; ++d) {
    b.Provider("layers." + Int(d) + ".mlp", mlp_layout);
    b.PlanEntry("layers." + Int(d) + ".mlp", mlp_layout);
  }
  b.Provider("layers.0.proj", proj_layout);
  b.PlanEntry("layers.0.proj", proj_layout);
  for (int d = 0; d < distinct; ++d) b.PlanEntry("layers." + Int(d) + ".attn", attn_layout);
  b.Native(NativeRequest({"layers.*.norm"}, norm_layout, ""));
  for (int d = 0; d < distinct; ++d) b.PlanEntry("layers." + Int(d) + ".norm", d == 0 ? norm_layout : norm_reduced);
  return b.Finish("model", o.plan);
}

std::vector<MeshAxisSpec> DefaultMesh(ModelKind kind) {
  if (kind == ModelKind::kDeepseek) return {{"dp", 2}, {"ep", 8}, {"tp", 4}};
  return {{"dp", 8}, {"tp", 8}};
}

}  // namespace

int64_t GenericOwnerCount(const GenOptions& options) {
  const double f = std::clamp(options.owners_fraction, 0.0, 1.0);
  const int64_t count = static_cast<int64_t>(std::llround(f * static_cast<double>(options.params)));
  return std::clamp<int64_t>(count, 0, options.params);
}

std::string ValidateOptions(const GenOptions& o) {
  std::set<std::string_view> axes;
  for (const MeshAxisSpec& axis : o.mesh) {
    if (axis.name.empty()) return "mesh axis names must be non-empty";
    if (axis.size < 1) return "mesh axis sizes must be positive";
    if (!axes.insert(axis.name).second) return "mesh axis '" + axis.name + "' given twice";
  }
  switch (o.kind) {
    case ModelKind::kDeepseek:
      if (o.layers < 1) return "--layers must be at least 1";
      if (o.experts < 1) return "--experts must be at least 1";
      if (o.dense_layers < 0) return "--dense must not be negative";
      break;
    case ModelKind::kGeneric:
      if (o.params < 1) return "--params must be at least 1";
      if (o.params > (int64_t{1} << 31)) return "--params must be at most 2^31";
      if (o.width < 1) return "--width must be at least 1";
      if (!(o.owners_fraction >= 0.0 && o.owners_fraction <= 1.0)) return "--owners-fraction must be in [0, 1]";
      break;
    case ModelKind::kShared:
      if (o.blocks < 1) return "--blocks must be at least 1";
      if (o.paths < o.blocks) return "--paths must be at least --blocks";
      break;
  }
  return "";
}

std::string GenerateDocument(const GenOptions& options) {
  if (!ValidateOptions(options).empty()) return "";
  const std::vector<MeshAxisSpec> mesh = options.mesh.empty() ? DefaultMesh(options.kind) : options.mesh;
  switch (options.kind) {
    case ModelKind::kDeepseek:
      return GenerateDeepseek(options, mesh);
    case ModelKind::kGeneric:
      return GenerateGeneric(options, mesh);
    case ModelKind::kShared:
      return GenerateShared(options, mesh);
  }
  return "";
}

std::optional<std::vector<MeshAxisSpec>> MeshForDevices(int64_t devices) {
  switch (devices) {
    case 8: return std::vector<MeshAxisSpec>{{"tp", 8}};
    case 64: return std::vector<MeshAxisSpec>{{"dp", 8}, {"tp", 8}};
    case 512: return std::vector<MeshAxisSpec>{{"dp", 8}, {"ep", 8}, {"tp", 8}};
    case 4096: return std::vector<MeshAxisSpec>{{"pp", 8}, {"dp", 8}, {"ep", 8}, {"tp", 8}};
    case 32768: return std::vector<MeshAxisSpec>{{"pp", 8}, {"dp", 8}, {"ep", 64}, {"tp", 8}};
    default: return std::nullopt;
  }
}

std::optional<std::vector<MeshAxisSpec>> ParseMeshSpec(std::string_view spec) {
  std::vector<MeshAxisSpec> out;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (comma != std::string_view::npos && spec.empty()) return std::nullopt;  // trailing comma
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    std::string_view size = item.substr(eq + 1);
    int64_t value = 0;
    auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), value);
    if (ec != std::errc() || end != size.data() + size.size() || value < 1) return std::nullopt;
    out.push_back({std::string(item.substr(0, eq)), value});
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<ModelKind> ParseModelKind(std::string_view name) {
  if (name == "deepseek") return ModelKind::kDeepseek;
  if (name == "generic") return ModelKind::kGeneric;
  if (name == "shared") return ModelKind::kShared;
  return std::nullopt;
}

std::optional<OwnerStyle> ParseOwnerStyle(std::string_view name) {
  if (name == "provider") return OwnerStyle::kProvider;
  if (name == "native") return OwnerStyle::kNative;
  if (name == "mixed") return OwnerStyle::kMixed;
  return std::nullopt;
}

}  // namespace shardplan::bench

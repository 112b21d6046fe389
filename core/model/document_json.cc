#include "core/model/document_json.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "core/model/training.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

namespace shardplan {
namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void String(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Key(Writer& w, std::string_view s) { w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

class DocumentWriter {
 public:
  // `resolved`: whether children and params hold indexes (else the NameIds
  // of the ids they name).
  DocumentWriter(const Document& doc, bool resolved) : doc_(doc), resolved_(resolved) { w_.SetIndent(' ', 2); }

  std::string Write(std::optional<NameId> root) {
    w_.StartObject();
    Key(w_, "schema");
    String(w_, "shardplan.v1");
    Key(w_, "mesh");
    w_.StartObject();
    for (const MeshAxis& axis : doc_.mesh) {
      Key(w_, Name(axis.name));
      w_.Int64(axis.size);
    }
    w_.EndObject();
    Key(w_, "parameters");
    w_.StartObject();
    for (const Parameter& p : doc_.parameters) WriteParameter(p);
    w_.EndObject();
    if (root) {
      Key(w_, "root");
      String(w_, Name(*root));
    }
    Key(w_, "modules");
    w_.StartObject();
    for (const Module& m : doc_.modules) WriteModule(m);
    w_.EndObject();
    WriteProviders();
    if (doc_.plan) {
      Key(w_, "plan");
      w_.StartObject();
      Key(w_, "modules");
      WriteLayouts(*doc_.plan);
      w_.EndObject();
    }
    if (!doc_.templates.empty()) {
      Key(w_, "templates");
      w_.StartArray();
      for (const Template& t : doc_.templates) WriteTemplate(t);
      w_.EndArray();
    }
    if (!doc_.overrides.empty()) {
      Key(w_, "overrides");
      WriteLayouts(doc_.overrides);
    }
    if (doc_.pipeline) WritePipeline(*doc_.pipeline);
    if (doc_.training) WriteTraining(*doc_.training);
    w_.EndObject();
    return std::string(buffer_.GetString(), buffer_.GetSize());
  }

 private:
  std::string_view Name(NameId id) const { return doc_.Name(id); }

  void WriteParameter(const Parameter& p) {
    Key(w_, Name(p.id));
    w_.StartObject();
    if (p.shape) {
      Key(w_, "shape");
      WriteInts(*p.shape);
    }
    if (p.dtype != Dtype::kFloat32) {
      Key(w_, "dtype");
      String(w_, DtypeName(p.dtype));
    }
    if (!p.blocks.empty()) {
      Key(w_, "blocks");
      WriteInts(p.blocks);
    }
    w_.EndObject();
  }

  void WriteInts(const SmallVector<int64_t>& values) {
    w_.StartArray();
    for (int64_t v : values) w_.Int64(v);
    w_.EndArray();
  }

  void WriteModule(const Module& m) {
    Key(w_, Name(m.id));
    w_.StartObject();
    if (m.type != kNoName) {
      Key(w_, "type");
      String(w_, Name(m.type));
    }
    if (!m.forward.empty()) {
      Key(w_, "forward");
      WriteForward(m);
    }
    if (!m.children.empty()) {
      Key(w_, "children");
      w_.StartObject();
      for (const auto& [name, child] : m.children) {
        Key(w_, Name(name));
        String(w_, resolved_ ? Name(doc_.modules[child].id) : Name(child));
      }
      w_.EndObject();
    }
    if (!m.params.empty()) {
      Key(w_, "params");
      w_.StartObject();
      for (const auto& [name, param] : m.params) {
        Key(w_, Name(name));
        String(w_, resolved_ ? Name(doc_.parameters[param].id) : Name(param));
      }
      w_.EndObject();
    }
    if (m.parallel) {
      Key(w_, "parallel");
      WriteParallel(m.parallel);
    }
    if (m.family) {
      const Family& family = *m.family;
      Key(w_, "family");
      w_.StartObject();
      Key(w_, "parallel");
      w_.Bool(family.parallel);
      Key(w_, "sharding");
      if (family.sharding) {
        WriteLayout(*family.sharding);
      } else {
        w_.Null();
      }
      if (family.cached) {
        Key(w_, "cached");
        w_.StartObject();
        Key(w_, "sharding");
        WriteLayout(family.cached->sharding);
        Key(w_, "parallel");
        WriteParallel(family.cached->parallel);
        w_.EndObject();
      }
      w_.EndObject();
    }
    w_.EndObject();
  }

  // The document keeps the names, the first plain name and whether one is
  // var-keyword (document_json.h): entries before the first plain name are
  // starred, and the var-keyword marker goes on the last entry that is not
  // the first plain one. A name that starts with '*' can only have been
  // read from a var-keyword entry ("***x"), and is written as one.
  void WriteForward(const Module& m) {
    const auto& names = m.forward;
    size_t first_plain = names.size();
    if (m.first_input != kNoName) {
      first_plain = std::find(names.begin(), names.end(), m.first_input) - names.begin();
    }
    size_t keyword = names.size();
    if (m.var_keyword) {
      keyword = names.size() - 1;
      if (keyword == first_plain) --keyword;
    }
    w_.StartArray();
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string_view name = Name(names[i]);
      std::string spelled;
      if (i == keyword || (!name.empty() && name.front() == '*')) {
        spelled = "**";
      } else if (i < first_plain) {
        spelled = "*";
      }
      spelled += name;
      String(w_, spelled);
    }
    w_.EndArray();
  }

  void WriteParallel(const std::optional<ParallelSpec>& parallel) {
    if (!parallel) {
      w_.Null();
      return;
    }
    w_.StartObject();
    Key(w_, "binding_kind");
    String(w_, Name(parallel->binding_kind));
    Key(w_, "axes");
    w_.StartArray();
    for (NameId axis : parallel->axes) String(w_, Name(axis));
    w_.EndArray();
    w_.EndObject();
  }

  void WriteLayout(const Layout& layout) {
    static constexpr std::array<std::string_view, 5> kMaps = {"params", "in_src", "in_dst", "out_src", "out_dst"};
    const MapRef* maps[] = {&layout.params(), &layout.in_src(), &layout.in_dst(), &layout.out_src(),
                            &layout.out_dst()};
    w_.StartObject();
    for (size_t k = 0; k < kMaps.size(); ++k) {
      if (!*maps[k]) continue;
      Key(w_, kMaps[k]);
      w_.StartObject();
      for (const PlacementEntry& e : **maps[k]) {
        Key(w_, Name(e.name));
        w_.StartObject();
        for (const AxisPlacement& a : e.placements) {
          Key(w_, Name(a.axis));
          String(w_, FormatPlacement(a.placement));
        }
        w_.EndObject();
      }
      w_.EndObject();
    }
    if (layout.out_names()) {
      Key(w_, "out_names");
      w_.StartArray();
      for (NameId n : *layout.out_names()) String(w_, Name(n));
      w_.EndArray();
    }
    if (layout.legacy_field() != kNoName) {
      Key(w_, Name(layout.legacy_field()));
      w_.Bool(true);
    }
    w_.EndObject();
  }

  void WriteLayouts(const std::vector<FqnLayout>& layouts) {
    w_.StartObject();
    for (const FqnLayout& e : layouts) {
      Key(w_, Name(e.fqn));
      WriteLayout(e.layout);
    }
    w_.EndObject();
  }

  void WriteProviders() {
    if (doc_.model_providers.empty() && doc_.native.empty()) return;
    Key(w_, "providers");
    w_.StartObject();
    if (!doc_.model_providers.empty()) {
      Key(w_, "sharding");
      WriteLayouts(doc_.model_providers);
    }
    if (!doc_.native.empty()) {
      Key(w_, "native");
      w_.StartArray();
      for (const NativeRequest& request : doc_.native) {
        w_.StartObject();
        Key(w_, "match");
        w_.StartArray();
        for (NameId pattern : request.match) String(w_, Name(pattern));
        w_.EndArray();
        Key(w_, "sharding");
        WriteLayout(request.sharding);
        Key(w_, "parallel");
        WriteParallel(request.parallel);
        w_.EndObject();
      }
      w_.EndArray();
    }
    w_.EndObject();
  }

  // Every value the section holds; shard_axes and the tensor axis only as
  // given (their defaults depend on the mesh), the model description's
  // defaulted fields only once filled.
  void WriteTraining(const Training& t) {
    Key(w_, "training");
    w_.StartObject();
    Key(w_, "zero");
    w_.Int(t.zero);
    if (t.shard_axes_given) {
      Key(w_, "shard_axes");
      w_.StartArray();
      for (NameId axis : t.shard_axes) String(w_, Name(axis));
      w_.EndArray();
    }
    Key(w_, "optimizer");
    String(w_, OptimizerName(t.optimizer));
    Key(w_, "optimizer_dtype");
    String(w_, DtypeName(t.optimizer_dtype));
    for (const auto& [key, dtype] : {std::pair{"master_dtype", t.master_dtype}, {"grad_dtype", t.grad_dtype}}) {
      if (!dtype) continue;
      Key(w_, key);
      String(w_, DtypeName(*dtype));
    }
    for (const auto& [key, patterns] : {std::pair{"frozen", &t.frozen}, {"fsdp_units", &t.fsdp_units}}) {
      Key(w_, key);
      w_.StartArray();
      for (const TrainingPattern& p : *patterns) String(w_, p.pattern);
      w_.EndArray();
    }
    Key(w_, "prefetch");
    w_.Int64(t.prefetch);
    if (t.activations) {
      const ActivationSettings& a = *t.activations;
      Key(w_, "activations");
      w_.StartObject();
      Key(w_, "micro_batch");
      w_.Int64(a.micro_batch);
      Key(w_, "seq_len");
      w_.Int64(a.seq_len);
      Key(w_, "recompute");
      String(w_, RecomputeName(a.recompute));
      if (t.tensor_axis_given) {
        Key(w_, "tensor_axis");
        if (a.tensor_axis) {
          String(w_, Name(*a.tensor_axis));
        } else {
          w_.Null();
        }
      }
      Key(w_, "sequence_parallel");
      w_.Bool(a.sequence_parallel);
      w_.EndObject();
    }
    if (t.model) {
      const ModelDescription& m = *t.model;
      Key(w_, "model");
      w_.StartObject();
      for (const auto& [key, value] : std::initializer_list<std::pair<std::string_view, int64_t>>{
               {"hidden_size", m.hidden_size},
               {"num_attention_heads", m.num_attention_heads},
               {"num_key_value_heads", m.num_key_value_heads},
               {"head_dim", m.head_dim},
               {"intermediate_size", m.intermediate_size},
               {"num_hidden_layers", m.num_hidden_layers},
               {"vocab_size", m.vocab_size},
               {"num_experts", m.num_experts},
               {"num_experts_per_tok", m.num_experts_per_tok},
               {"moe_intermediate_size", m.moe_intermediate_size},
               {"num_shared_experts", m.num_shared_experts},
               {"first_k_dense_replace", m.first_k_dense_replace},
           }) {
        // 0 is a default not filled yet where the minimum is 1.
        if (value == 0 && key != "num_experts" && key != "num_shared_experts" && key != "first_k_dense_replace") {
          continue;
        }
        Key(w_, key);
        w_.Int64(value);
      }
      Key(w_, "gated_mlp");
      w_.Bool(m.gated_mlp);
      w_.EndObject();
    }
    if (t.device_memory) {
      Key(w_, "device_memory");
      w_.Uint64(*t.device_memory);
    }
    Key(w_, "headroom");
    w_.Double(t.headroom);
    w_.EndObject();
  }

  void WritePipeline(const PipelinePlan& pipeline) {
    Key(w_, "pipeline");
    w_.StartObject();
    if (!pipeline.prefix.empty()) {
      Key(w_, "prefix");
      String(w_, pipeline.prefix);
    }
    Key(w_, "modules");
    w_.StartObject();
    for (const PipelineStage& stage : pipeline.stages) {
      Key(w_, stage.module);
      w_.StartArray();
      for (const std::vector<std::string>* names : {&stage.inputs, &stage.outputs}) {
        w_.StartArray();
        for (const std::string& name : *names) String(w_, name);
        w_.EndArray();
      }
      w_.EndArray();
    }
    w_.EndObject();
    w_.EndObject();
  }

  void WriteTemplate(const Template& t) {
    w_.StartObject();
    Key(w_, "axis");
    String(w_, Name(t.axis));
    if (!t.prefix.empty()) {
      Key(w_, "prefix");
      String(w_, t.prefix);
    }
    Key(w_, "rules");
    w_.StartObject();
    for (const TemplateRule& rule : t.rules) {
      Key(w_, rule.pattern);
      String(w_, StyleName(rule.style));
    }
    w_.EndObject();
    w_.EndObject();
  }

  const Document& doc_;
  const bool resolved_;
  rapidjson::StringBuffer buffer_;
  Writer w_{buffer_};
};

}  // namespace

std::string DocumentToJson(const Document& doc) {
  return DocumentWriter(doc, /*resolved=*/true).Write(doc.modules.empty() ? std::nullopt
                                                                          : std::optional(doc.modules[doc.root].id));
}

std::string UnresolvedDocumentToJson(const Document& doc, std::optional<NameId> root) {
  return DocumentWriter(doc, /*resolved=*/false).Write(root);
}

}  // namespace shardplan

#include "core/builder.h"
#include "core/model/training.h"
#include "core/model/parse.h"

#include <algorithm>
#include <iterator>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/model/document.h"
#include "core/model/document_checks.h"
#include "core/model/document_json.h"
#include "core/model/style.h"
#include "core/text/json_pointer.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

absl::Status Duplicate(std::string_view what, std::string_view name) {
  return Invalid(absl::StrCat("duplicate ", what, " ", PyRepr(name)));
}

absl::Status CheckParallel(const ParallelDraft* parallel) {
  if (parallel != nullptr && parallel->binding_kind.empty()) return Invalid("binding_kind must not be empty");
  return absl::OkStatus();
}

constexpr char kPlanOrTemplates[] =
    "a document gives either a plan (a final plan to check) or templates/overrides (a plan to make), not both";

// Copies layouts into another store, each distinct map and body once: a
// built document must not share the builder's store, which the builder
// keeps adding to while the document may be read from other threads.
class CopyInto {
 public:
  explicit CopyInto(MapStore& store) : store_(store) {}

  void operator()(Layout& layout) {
    auto [it, fresh] = bodies_.try_emplace(layout.body, nullptr);
    if (fresh) {
      LayoutBody body;
      body.params = Map(layout.body->params);
      body.in_src = Map(layout.body->in_src);
      body.in_dst = Map(layout.body->in_dst);
      body.out_src = Map(layout.body->out_src);
      body.out_dst = Map(layout.body->out_dst);
      body.out_names = layout.body->out_names;
      body.legacy_field = layout.body->legacy_field;
      it->second = store_.Intern(std::move(body));
    }
    layout.body = it->second;
  }

 private:
  MapRef Map(const MapRef& map) {
    if (!map) return MapRef();
    auto [it, fresh] = maps_.try_emplace(map.get(), MapRef());
    if (fresh) it->second = store_.Intern(*map);
    return it->second;
  }

  MapStore& store_;
  absl::flat_hash_map<const LayoutBody*, const LayoutBody*> bodies_;
  absl::flat_hash_map<const PlacementMap*, MapRef> maps_;
};

}  // namespace

// ---- LayoutDraft ------------------------------------------------------------

LayoutDraft::Entry& LayoutDraft::FindOrAdd(Map map, std::string_view name) {
  Port& port = maps_[map];
  port.declared = true;
  auto [it, fresh] = port.index.try_emplace(std::string(name), port.entries.size());
  if (fresh) port.entries.push_back({std::string(name), {}});
  return port.entries[it->second];
}

void LayoutDraft::AddEntry(Map map, std::string_view name) { FindOrAdd(map, name); }

absl::Status LayoutDraft::Place(Map map, std::string_view name, std::string_view axis, std::string_view placement) {
  const std::optional<Placement> parsed = ParsePlacement(placement);
  if (!parsed) {
    return Invalid(
        absl::StrCat("bad placement ", PyRepr(placement), " (expected S(dim), R, P or P(sum|avg|max|min|prod))"));
  }
  const Port& port = maps_[map];
  if (auto it = port.index.find(name); it != port.index.end()) {
    for (const auto& [placed, p] : port.entries[it->second].placements) {
      if (placed == axis) return Invalid(absl::StrCat("axis ", PyRepr(axis), " is already placed for ", PyRepr(name)));
    }
  }
  FindOrAdd(map, name).placements.emplace_back(std::string(axis), std::string(placement));
  return absl::OkStatus();
}

absl::Status LayoutDraft::SetLegacyField(std::string_view field) {
  static_assert(std::tuple_size_v<decltype(legacy_)> == std::size(kLegacyLayoutFields));
  for (size_t k = 0; k < legacy_.size(); ++k) {
    if (kLegacyLayoutFields[k] == field) {
      legacy_[k] = true;
      return absl::OkStatus();
    }
  }
  return Invalid(absl::StrCat("unknown legacy field ", PyRepr(field),
                              " (expected local_compute_fn, inner_wrapper, inner_target or region_dispatch)"));
}

// ---- DocumentBuilder --------------------------------------------------------

struct DocumentBuilder::State {
  // The index of module `id`, or an error naming it.
  absl::StatusOr<ModuleId> FindModule(std::string_view id) const;
  absl::StatusOr<ParamId> FindParameter(std::string_view id) const;
  // Refuses a child or parameter name of the module (`child`: a child's)
  // that the format does not allow there.
  absl::Status CheckLocalName(ModuleId module, std::string_view name, bool child) const;
  absl::Status CheckPlanLayout(const LayoutDraft& layout) const;
  // The layout `draft` states, stored in the document.
  Layout Intern(const LayoutDraft& draft, Origin origin);
  std::optional<ParallelSpec> Intern(const ParallelDraft* draft, Origin origin);

  // The document so far: children and params hold the NameId of the id
  // they name until Build resolves a copy; root and family_modules are set
  // by Build.
  std::unique_ptr<Document> doc = std::make_unique<Document>();
  std::optional<NameId> root;
  IdIndex modules, parameters;
  // (module, name) -> whether the name is a child (else a parameter).
  absl::flat_hash_map<std::pair<ModuleId, NameId>, bool> local_names;
  absl::flat_hash_set<NameId> providers, plan, overrides;
  absl::flat_hash_set<std::pair<size_t, std::string>> patterns;  // (template, pattern)
  absl::flat_hash_set<std::string> pipeline_modules;
};

absl::StatusOr<ModuleId> DocumentBuilder::State::FindModule(std::string_view id) const {
  const uint32_t index = modules.Find(doc->names, id);
  if (index == IdIndex::kNone) return Invalid(absl::StrCat("unknown module id ", PyRepr(id), " (add it first)"));
  return index;
}
absl::StatusOr<ParamId> DocumentBuilder::State::FindParameter(std::string_view id) const {
  const uint32_t index = parameters.Find(doc->names, id);
  if (index == IdIndex::kNone) return Invalid(absl::StrCat("unknown parameter id ", PyRepr(id), " (add it first)"));
  return index;
}
absl::Status DocumentBuilder::State::CheckLocalName(ModuleId module, std::string_view name, bool child) const {
  const std::string_view what = child ? "child name" : "parameter name";
  if (name.empty()) return Invalid(absl::StrCat(what, " must not be empty"));
  if (name.find('.') != std::string_view::npos) {
    return Invalid(absl::StrCat(what, " ", PyRepr(name), " must not contain '.'"));
  }
  const NameId id = doc->names.Find(name);
  if (id == kNoName) return absl::OkStatus();
  const auto it = local_names.find(std::pair{module, id});
  if (it == local_names.end()) return absl::OkStatus();
  const std::string_view module_id = doc->Name(doc->modules[module].id);
  if (it->second != child) {
    return Invalid(absl::StrCat("name ", PyRepr(name), " is both a child and a parameter of module ",
                                PyRepr(module_id)));
  }
  return Duplicate(absl::StrCat(what, " of module ", PyRepr(module_id), ":"), name);
}
absl::Status DocumentBuilder::State::CheckPlanLayout(const LayoutDraft& layout) const {
  if (!layout.declared(LayoutDraft::kParams)) return Invalid("a plan layout must give params (declare the params map)");
  return absl::OkStatus();
}
Layout DocumentBuilder::State::Intern(const LayoutDraft& draft, Origin origin) {
  LayoutBody body;
  MapRef* const maps[] = {&body.params, &body.in_src, &body.in_dst, &body.out_src, &body.out_dst};
  for (size_t k = 0; k < LayoutDraft::kMaps; ++k) {
    const LayoutDraft::Port& port = draft.maps_[k];
    if (!port.declared) continue;
    PlacementMap map;
    map.reserve(port.entries.size());
    for (const LayoutDraft::Entry& entry : port.entries) {
      PlacementEntry& e = map.emplace_back();
      e.name = doc->names.Intern(entry.name);
      for (const auto& [axis, placement] : entry.placements) {
        e.placements.push_back({doc->names.Intern(axis), *ParsePlacement(placement)});
      }
    }
    *maps[k] = doc->maps->Intern(std::move(map));
  }
  if (draft.out_names_) {
    body.out_names.emplace();
    for (const std::string& name : *draft.out_names_) body.out_names->push_back(doc->names.Intern(name));
  }
  for (size_t k = 0; k < draft.legacy_.size(); ++k) {
    if (draft.legacy_[k]) {
      body.legacy_field = doc->names.Intern(kLegacyLayoutFields[k]);
      break;
    }
  }
  return {doc->maps->Intern(std::move(body)), origin};
}
std::optional<ParallelSpec> DocumentBuilder::State::Intern(const ParallelDraft* draft, Origin origin) {
  if (draft == nullptr) return std::nullopt;
  ParallelSpec spec;
  spec.binding_kind = doc->names.Intern(draft->binding_kind);
  spec.origin = origin;
  for (std::string_view axis : draft->axes) spec.axes.push_back(doc->names.Intern(axis));
  return spec;
}
DocumentBuilder::DocumentBuilder() : state_(std::make_unique<State>()) {}
DocumentBuilder::~DocumentBuilder() = default;



absl::Status DocumentBuilder::AddAxis(std::string_view name, int64_t size) {
  if (size < 1) return Invalid(absl::StrCat("mesh axis ", PyRepr(name), " must have at least 1 device"));
  const NameId axis = state_->doc->names.Find(name);
  if (axis != kNoName && state_->doc->IsMeshAxis(axis)) return Duplicate("mesh axis", name);
  const NameId interned = state_->doc->names.Intern(name);
  state_->doc->mesh.push_back({interned, size});
  state_->doc->mesh_names.Insert(interned);
  return absl::OkStatus();
}

absl::Status DocumentBuilder::AddParameter(std::string_view id, std::optional<absl::Span<const int64_t>> shape,
                                           std::string_view dtype) {
  Parameter param;
  if (shape) {
    if (std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d < 0; })) {
      return Invalid(absl::StrCat("parameter ", PyRepr(id), " has a negative dimension"));
    }
    param.shape.emplace(shape->begin(), shape->end());
  }
  if (!dtype.empty()) {
    const std::optional<Dtype> parsed = ParseDtype(dtype);
    if (!parsed) {
      return Invalid(absl::StrCat("unknown dtype ", PyRepr(dtype),
                                  " (expected float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, int8, int32, "
                                  "int64 or bool)"));
    }
    param.dtype = *parsed;
  }
  if (param.shape && !TensorBytes(*param.shape, param.dtype)) return Invalid(ParameterTooLargeMessage(id, param.dtype));
  if (state_->parameters.Find(state_->doc->names, id) != IdIndex::kNone) return Duplicate("parameter id", id);
  param.id = state_->doc->names.Intern(id);
  state_->parameters.Define(param.id, static_cast<ParamId>(state_->doc->parameters.size()));
  state_->doc->parameters.push_back(std::move(param));
  return absl::OkStatus();
}

absl::Status DocumentBuilder::SetParameterBlocks(std::string_view id, absl::Span<const int64_t> blocks) {
  absl::StatusOr<ParamId> found = state_->FindParameter(id);
  if (!found.ok()) return found.status();
  Parameter& param = state_->doc->parameters[*found];
  if (!param.shape || param.shape->size() != blocks.size() ||
      std::any_of(blocks.begin(), blocks.end(), [](int64_t b) { return b < 1; })) {
    return Invalid(absl::StrCat("blocks of parameter ", PyRepr(id),
                                " must give one positive integer per dim of a known shape"));
  }
  for (size_t d = 0; d < blocks.size(); ++d) {
    if ((*param.shape)[d] % blocks[d] != 0) {
      return Invalid(absl::StrCat("dim ", d, " of parameter ", PyRepr(id), " of size ", (*param.shape)[d],
                                  " is not a multiple of its block size ", blocks[d]));
    }
  }
  param.blocks.assign(blocks.begin(), blocks.end());
  return absl::OkStatus();
}

absl::Status DocumentBuilder::AddModule(std::string_view id, std::string_view type) {
  if (state_->modules.Find(state_->doc->names, id) != IdIndex::kNone) return Duplicate("module id", id);
  const ModuleId index = static_cast<ModuleId>(state_->doc->modules.size());
  Module& module = state_->doc->modules.emplace_back();
  module.id = state_->doc->names.Intern(id);
  if (!type.empty()) module.type = state_->doc->names.Intern(type);
  state_->modules.Define(module.id, index);
  return absl::OkStatus();
}

absl::Status DocumentBuilder::AddForwardArg(std::string_view module, std::string_view spelled) {
  absl::StatusOr<ModuleId> found = state_->FindModule(module);
  if (!found.ok()) return found.status();
  const auto [name, kind] = ReadForwardArg(spelled);
  AppendForward(state_->doc->modules[*found], state_->doc->names.Intern(name), kind);
  return absl::OkStatus();
}


absl::Status DocumentBuilder::AddChild(std::string_view module, std::string_view name, std::string_view child) {
  absl::StatusOr<ModuleId> found = state_->FindModule(module);
  if (!found.ok()) return found.status();
  if (absl::Status s = state_->CheckLocalName(*found, name, /*child=*/true); !s.ok()) return s;
  const NameId local = state_->doc->names.Intern(name);
  state_->local_names.emplace(std::pair{*found, local}, true);
  // The target's id until Build resolves it, as the parser records it.
  state_->doc->modules[*found].children.emplace_back(local, state_->doc->names.Intern(child));
  return absl::OkStatus();
}

absl::Status DocumentBuilder::AddModuleParam(std::string_view module, std::string_view name,
                                             std::string_view parameter) {
  absl::StatusOr<ModuleId> found = state_->FindModule(module);
  if (!found.ok()) return found.status();
  if (absl::Status s = state_->CheckLocalName(*found, name, /*child=*/false); !s.ok()) return s;
  const NameId local = state_->doc->names.Intern(name);
  state_->local_names.emplace(std::pair{*found, local}, false);
  state_->doc->modules[*found].params.emplace_back(local, state_->doc->names.Intern(parameter));
  return absl::OkStatus();
}


absl::Status DocumentBuilder::SetModuleParallel(std::string_view module, const ParallelDraft* parallel) {
  absl::StatusOr<ModuleId> found = state_->FindModule(module);
  if (!found.ok()) return found.status();
  if (absl::Status s = CheckParallel(parallel); !s.ok()) return s;
  state_->doc->modules[*found].parallel = state_->Intern(parallel, {Origin::Kind::kModuleParallel, *found});
  return absl::OkStatus();
}

absl::Status DocumentBuilder::SetFamily(std::string_view module, bool parallel, const LayoutDraft* sharding) {
  absl::StatusOr<ModuleId> found = state_->FindModule(module);
  if (!found.ok()) return found.status();
  std::unique_ptr<Family>& family = state_->doc->modules[*found].family;
  if (family == nullptr) family = std::make_unique<Family>();
  family->parallel = parallel;
  family->sharding.reset();
  if (sharding != nullptr) family->sharding = state_->Intern(*sharding, {Origin::Kind::kFamily, *found});
  return absl::OkStatus();
}

absl::Status DocumentBuilder::SetFamilyCached(std::string_view module, const LayoutDraft& sharding,
                                              const ParallelDraft* parallel) {
  absl::StatusOr<ModuleId> found = state_->FindModule(module);
  if (!found.ok()) return found.status();
  if (absl::Status s = CheckParallel(parallel); !s.ok()) return s;
  Family* family = state_->doc->modules[*found].family.get();
  if (family == nullptr) {
    return Invalid(absl::StrCat("module ", PyRepr(module), " is not a family member (set its family first)"));
  }
  Family::Cached cached;
  cached.sharding = state_->Intern(sharding, {Origin::Kind::kCachedSharding, *found});
  cached.parallel = state_->Intern(parallel, {Origin::Kind::kCachedParallel, *found});
  family->cached = std::move(cached);
  return absl::OkStatus();
}

void DocumentBuilder::SetRoot(std::string_view module) { state_->root = state_->doc->names.Intern(module); }

absl::Status DocumentBuilder::AddProvider(std::string_view fqn, const LayoutDraft& layout) {
  const NameId name = state_->doc->names.Intern(fqn);
  if (!state_->providers.insert(name).second) return Duplicate("provider FQN", fqn);
  const Origin origin{Origin::Kind::kProvider, static_cast<uint32_t>(state_->doc->model_providers.size())};
  state_->doc->model_providers.push_back({name, state_->Intern(layout, origin)});
  return absl::OkStatus();
}

absl::Status DocumentBuilder::AddNative(absl::Span<const std::string_view> match, const LayoutDraft& sharding,
                                        const ParallelDraft* parallel) {
  if (absl::Status s = CheckParallel(parallel); !s.ok()) return s;
  const uint32_t index = static_cast<uint32_t>(state_->doc->native.size());
  NativeRequest request;
  for (std::string_view pattern : match) request.match.push_back(state_->doc->names.Intern(pattern));
  request.sharding = state_->Intern(sharding, {Origin::Kind::kNativeSharding, index});
  request.parallel = state_->Intern(parallel, {Origin::Kind::kNativeParallel, index});
  request.pointer = absl::StrCat("/providers/native/", index);
  state_->doc->native.push_back(std::move(request));
  return absl::OkStatus();
}

absl::Status DocumentBuilder::DeclarePlan() {
  if (!state_->doc->templates.empty() || !state_->doc->overrides.empty()) return Invalid(kPlanOrTemplates);
  if (!state_->doc->plan) state_->doc->plan.emplace();
  return absl::OkStatus();
}


absl::Status DocumentBuilder::AddPlanEntry(std::string_view fqn, const LayoutDraft& layout) {
  if (absl::Status s = state_->CheckPlanLayout(layout); !s.ok()) return s;
  if (absl::Status s = DeclarePlan(); !s.ok()) return s;
  const NameId name = state_->doc->names.Intern(fqn);
  if (!state_->plan.insert(name).second) return Duplicate("plan FQN", fqn);
  const Origin origin{Origin::Kind::kPlan, static_cast<uint32_t>(state_->doc->plan->size())};
  state_->doc->plan->push_back({name, state_->Intern(layout, origin)});
  return absl::OkStatus();
}

absl::StatusOr<size_t> DocumentBuilder::AddTemplate(std::string_view axis, std::string_view prefix) {
  if (state_->doc->plan) return Invalid(kPlanOrTemplates);
  const NameId name = state_->doc->names.Find(axis);
  if (name == kNoName || !state_->doc->IsMeshAxis(name)) {
    return Invalid(absl::StrCat("template axis ", PyRepr(axis), " is not a mesh axis (add the axis first)"));
  }
  const size_t index = state_->doc->templates.size();
  Template& t = state_->doc->templates.emplace_back();
  t.axis = name;
  t.prefix = std::string(prefix);
  t.pointer = absl::StrCat("/templates/", index);
  return index;
}

absl::Status DocumentBuilder::AddTemplateRule(size_t index, std::string_view pattern, std::string_view style) {
  if (index >= state_->doc->templates.size()) {
    return Invalid(absl::StrCat("no template ", index, " (the builder has ", state_->doc->templates.size(), ")"));
  }
  if (pattern.empty()) return Invalid("a template pattern must not be empty");
  const std::optional<Style> parsed = ParseStyle(style);
  if (!parsed) {
    return Invalid(UnknownStyleMessage(style));
  }
  if (!state_->patterns.emplace(index, std::string(pattern)).second) {
    return Duplicate(absl::StrCat("pattern of template ", index, ":"), pattern);
  }
  Template& t = state_->doc->templates[index];
  t.rules.push_back({std::string(pattern), *parsed, absl::StrCat(t.pointer, "/rules/", JsonPointerToken(pattern))});
  return absl::OkStatus();
}

absl::Status DocumentBuilder::AddOverride(std::string_view fqn, const LayoutDraft& layout) {
  if (state_->doc->plan) return Invalid(kPlanOrTemplates);
  if (absl::Status s = state_->CheckPlanLayout(layout); !s.ok()) return s;
  const NameId name = state_->doc->names.Intern(fqn);
  if (!state_->overrides.insert(name).second) return Duplicate("override FQN", fqn);
  const Origin origin{Origin::Kind::kOverride, static_cast<uint32_t>(state_->doc->overrides.size())};
  state_->doc->overrides.push_back({name, state_->Intern(layout, origin)});
  return absl::OkStatus();
}

absl::Status DocumentBuilder::SetTraining(std::string_view json) {
  Document& doc = *state_->doc;
  if (doc.training) return Invalid("the document already has a training section");
  if (auto error = ParseTrainingSection(doc, json, Limits{})) {
    doc.training.reset();
    return Invalid(absl::StrCat(error->message, " (at ", error->pointer, ")"));
  }
  return absl::OkStatus();
}

absl::Status DocumentBuilder::SetPipeline(std::string_view prefix) {
  if (state_->doc->pipeline) return Invalid("the document already has a pipeline plan");
  state_->doc->pipeline.emplace().prefix = std::string(prefix);
  return absl::OkStatus();
}

absl::Status DocumentBuilder::AddPipelineModule(std::string_view module, const std::vector<std::string_view>& inputs,
                                                const std::vector<std::string_view>& outputs) {
  if (!state_->doc->pipeline) return Invalid("the document has no pipeline plan (set the pipeline first)");
  if (module.empty()) return Invalid("a pipeline module must not be empty");
  if (!state_->pipeline_modules.emplace(module).second) return Duplicate("pipeline module", module);
  PipelineStage& stage = state_->doc->pipeline->stages.emplace_back();
  stage.module = std::string(module);
  stage.inputs.assign(inputs.begin(), inputs.end());
  stage.outputs.assign(outputs.begin(), outputs.end());
  stage.pointer = absl::StrCat("/pipeline/modules/", JsonPointerToken(module));
  return absl::OkStatus();
}

ParsedDocument DocumentBuilder::Build(const Limits& limits) const {
  ParsedDocument result;
  auto invalid = [&](DocumentError error) {
    result.error = InvalidDocument(error);
    return std::move(result);
  };
  // The parser refuses the parameters' total as it reads them, before the
  // checks below.
  uint64_t parameter_bytes = 0;
  for (const Parameter& param : state_->doc->parameters) {
    const uint64_t bytes = param.shape ? *TensorBytes(*param.shape, param.dtype) : 0;
    if (bytes > kMaxParameterBytes - parameter_bytes) return invalid(ParametersTooLarge());
    parameter_bytes += bytes;
  }
  if (!state_->root) return invalid({MissingKeyMessage("root"), ""});
  std::unique_ptr<Document> doc = state_->doc->Clone();
  doc->maps = std::make_shared<MapStore>();
  CopyInto copy(*doc->maps);
  for (FqnLayout& e : doc->model_providers) copy(e.layout);
  for (NativeRequest& r : doc->native) copy(r.sharding);
  if (doc->plan) {
    for (FqnLayout& e : *doc->plan) copy(e.layout);
  }
  for (FqnLayout& e : doc->overrides) copy(e.layout);
  for (ModuleId m = 0; m < doc->modules.size(); ++m) {
    Family* family = doc->modules[m].family.get();
    if (family == nullptr) continue;
    doc->family_modules.push_back(m);
    if (family->sharding) copy(*family->sharding);
    if (family->cached) copy(family->cached->sharding);
  }
  if (auto error = ResolveReferences(*doc, state_->modules, state_->parameters)) return invalid(*std::move(error));
  if (auto error = ResolveRoot(*doc, doc->Name(*state_->root), state_->modules)) return invalid(*std::move(error));
  if (auto error = CheckTree(*doc, limits)) return invalid(*std::move(error));
  if (doc->training) {
    if (auto error = CompleteTraining(*doc, *doc->training)) return invalid(*std::move(error));
  }
  result.document = std::move(doc);
  return result;
}

std::string DocumentBuilder::ToJson() const { return UnresolvedDocumentToJson(*state_->doc, state_->root); }

}  // namespace shardplan

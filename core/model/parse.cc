#include "core/model/parse.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/diagnostics/sink.h"
#include "core/model/document_checks.h"
#include "core/model/json.h"
#include "core/text/json_pointer.h"
#include "core/model/name_set.h"
#include "core/exec/parallel.h"
#include "core/text/bytes.h"
#include "core/text/pyrepr.h"
#include "core/text/utf8.h"

namespace shardplan {
namespace {

using json::Value;

std::string_view TypeName(const Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "a boolean";
  if (v.IsNumber()) return "a number";
  if (v.IsString()) return "a string";
  if (v.IsArray()) return "an array";
  return "an object";
}

std::string_view Str(const Value& v) { return v.str(); }

class Parser {
 public:
  // plan_room: the entries a plan gets room for when it starts (its
  // count is not known before its members are read).
  Parser(Document& doc, const Limits& limits, size_t plan_room) : doc_(doc), limits_(limits), plan_room_(plan_room) {}

  // The maps whose members the scanner hands over one at a time.
  enum class Section { kParameters, kModules, kProviders, kPlan };
  // One member of a streamed map: its key and its value.
  struct Item {
    std::string_view key;
    Value value;
    // A layout spelled exactly as the member before it, which the scanner
    // did not read again (`value` is null): the parser reuses that layout.
    bool unread = false;
  };
  // One member of a section's map, parsed before ParseRoot sees the rest of
  // the document (where the map then stands empty).
  bool StreamItem(Section section, const Item& item);
  bool ParseRoot(const Value& root);
  const std::string& error() const { return error_; }
  const std::string& error_pointer() const { return error_pointer_; }
  // Starts loading the interner's slots of the names StreamItem of these
  // members will look up first: their keys (ids and FQNs) and the ids a
  // module's children and params refer to. The table is too large for any
  // cache; fetched together, their misses overlap instead of following one
  // another.
  void Prefetch(const std::vector<Item>& items, Section section) const;

 private:
  // One reference token of the current pointer: a key, or an array index
  // when `key.data()` is null. Tokens are kept as views and only spelled
  // out when a pointer is needed (an error, or a stored layout pointer).
  struct Token {
    std::string_view key;
    size_t index = 0;
  };
  // Appends one reference token to the current pointer for its lifetime.
  class At {
   public:
    At(Parser& parser, std::string_view key) : parser_(parser) { parser_.tokens_.emplace_back().key = key; }
    At(Parser& parser, size_t index) : parser_(parser) { parser_.tokens_.emplace_back().index = index; }
    ~At() { parser_.tokens_.pop_back(); }

   private:
    Parser& parser_;
  };

  std::string Pointer() const {
    std::string out;
    for (const Token& t : tokens_) {
      out += '/';
      if (t.key.data() == nullptr) {
        out += std::to_string(t.index);
      } else {
        out += JsonPointerToken(t.key);
      }
    }
    return out;
  }

  bool Fail(std::string message) {
    error_ = std::move(message);
    error_pointer_ = Pointer();
    return false;
  }
  // A whole-document check's failure, which names its own pointer.
  bool Fail(DocumentError error) {
    error_ = std::move(error.message);
    error_pointer_ = std::move(error.pointer);
    return false;
  }
  bool Expect(const Value& v, bool ok, std::string_view what) {
    return ok || Fail(absl::StrCat("expected ", what, ", got ", TypeName(v)));
  }
  bool ExpectObject(const Value& v) { return Expect(v, v.IsObject(), "an object"); }
  bool ExpectArray(const Value& v) { return Expect(v, v.IsArray(), "an array"); }
  bool ExpectString(const Value& v) { return Expect(v, v.IsString(), "a string"); }

  // Every key unique and, when `allowed` is non-empty, one of `allowed`.
  // The members of an object of known shape, by the index of their key in
  // `allowed`, read in one pass; unknown and duplicate keys are refused.
  template <size_t N>
  struct Fields {
    std::array<const Value*, N> values{};
    const Value* operator[](size_t k) const { return values[k]; }
  };
  template <size_t N>
  bool ReadFields(const Value& obj, const std::array<std::string_view, N>& allowed, Fields<N>& out);
  bool Required(const Value* v, std::string_view key) {
    return v != nullptr || Fail(MissingKeyMessage(key));
  }
  bool CheckUniqueKeys(const Value& obj);
  // Fails on a duplicate key anywhere inside `v` (values we do not model).
  bool CheckUniqueKeysDeep(const Value& v);
  bool NonEmptyName(const Value& key, std::string_view what);

  bool ParseMesh(const Value& v);
  // `index`: the module's index in the document.
  bool ParseModule(const Value& v, ModuleId index, Module& module);
  bool ParseForward(const Value& v, Module& module);
  bool ParseFamily(const Value& v, ModuleId index, Family& family);
  bool ParseParallel(const Value& v, Origin origin, std::optional<ParallelSpec>& out);
  bool ParseLayout(const Value& v, bool in_plan, Origin origin, Layout& out);
  bool ParsePlacementMap(const Value& v, PlacementMap& out);
  bool ParseNamedPlacements(const Value& v, NamedPlacements& out);
  bool ParseProviders(const Value& v);
  bool ParsePlan(const Value& v);
  bool ParseTemplates(const Value& v);
  bool ParseOverrides(const Value& v);
  // One member of the parameters, modules, providers.sharding or
  // plan.modules map (the current pointer names the map).
  bool ParameterItem(std::string_view id, const Value& v);
  bool ModuleItem(std::string_view id, const Value& v);
  // `unread`: the value is spelled as the previous member's of the map (as
  // models repeat their layouts), was not read, and gets its layout
  // (Item::unread).
  bool FqnLayoutItem(bool in_plan, std::string_view fqn, const Value& v, bool unread);
  bool NonNegativeInts(const Value& v, bool positive, SmallVector<int64_t>& out);

  // The id of a name that recurs throughout a document (a type, or a
  // child, parameter, port or axis name): a small cache of recent ones is
  // looked up before the interner, whose hash and table probe cost several
  // times more. Ids and unique names go to the interner directly.
  NameId Common(std::string_view name) {
    Recent& r = recent_[name.empty() ? 0
                                     : (name.size() * 7 + static_cast<uint8_t>(name.front()) * 3 +
                                        static_cast<uint8_t>(name.back())) % recent_.size()];
    if (r.id == kNoName || !SameText(r.text, name)) {
      r.id = doc_.names.Intern(name);
      r.text = doc_.names.View(r.id);
    }
    return r.id;
  }
  struct Recent {
    std::string_view text;  // the interner's copy
    NameId id = kNoName;
  };

  // Creates the plan, once, with room for plan_room_ entries (address
  // space: pages past the last entry are never touched, as in
  // ParseDocument).
  void StartPlan() {
    if (doc_.plan) return;
    ReserveAdvised(doc_.plan.emplace(), plan_room_);
  }

  Document& doc_;
  const Limits& limits_;
  const size_t plan_room_;
  std::array<Recent, 64> recent_{};
  // The layout of the last member FqnLayoutItem took.
  Layout last_layout_;
  // The last parallel spec parsed, which models repeat module after module.
  std::optional<ParallelSpec> last_parallel_;
  // Whether `v` is spelled {"binding_kind": K, "axes": [A, ...]} with the
  // names of `spec`: it then parses to `spec`, without an error.
  bool SameParallel(const Value& v, const ParallelSpec& spec) const;
  std::vector<Token> tokens_;
  std::string error_;
  std::string error_pointer_;
  // Parameter and module indexes by the NameId of their id: one hash of
  // the id string per reference.
  IdIndex param_by_name_;
  IdIndex module_by_name_;
  NameBits provider_fqns_, plan_fqns_;
};

bool Parser::CheckUniqueKeys(const Value& obj) {
  const auto n = obj.MemberCount();
  if (n <= 16) {
    for (auto a = obj.MemberBegin(); a != obj.MemberEnd(); ++a) {
      for (auto b = obj.MemberBegin(); b != a; ++b) {
        if (Str(a->name) == Str(b->name)) {
          At at(*this, Str(a->name));
          return Fail(absl::StrCat("duplicate key ", PyRepr(Str(a->name))));
        }
      }
    }
    return true;
  }
  absl::flat_hash_set<std::string_view> seen;
  seen.reserve(n);
  for (auto m = obj.MemberBegin(); m != obj.MemberEnd(); ++m) {
    if (!seen.insert(Str(m->name)).second) {
      At at(*this, Str(m->name));
      return Fail(absl::StrCat("duplicate key ", PyRepr(Str(m->name))));
    }
  }
  return true;
}

template <size_t N>
bool Parser::ReadFields(const Value& obj, const std::array<std::string_view, N>& allowed, Fields<N>& out) {
  if (!ExpectObject(obj)) return false;
  for (auto m = obj.MemberBegin(); m != obj.MemberEnd(); ++m) {
    const std::string_view key = Str(m->name);
    size_t k = 0;
    while (k < N && !SameText(allowed[k], key)) ++k;
    if (k == N) {
      At at(*this, key);
      std::string list;
      for (std::string_view a : allowed) absl::StrAppend(&list, list.empty() ? "" : ", ", a);
      return Fail(absl::StrCat("unknown key ", PyRepr(key), " (expected one of: ", list, ")"));
    }
    if (out[k] != nullptr) {
      At at(*this, key);
      return Fail(absl::StrCat("duplicate key ", PyRepr(key)));
    }
    out.values[k] = &m->value;
  }
  return true;
}

bool Parser::CheckUniqueKeysDeep(const Value& v) {
  if (v.IsObject()) {
    if (!CheckUniqueKeys(v)) return false;
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      At at(*this, Str(m->name));
      if (!CheckUniqueKeysDeep(m->value)) return false;
    }
  } else if (v.IsArray()) {
    for (size_t i = 0; i < v.Size(); ++i) {
      At at(*this, i);
      if (!CheckUniqueKeysDeep(v[i])) return false;
    }
  }
  return true;
}

bool Parser::NonEmptyName(const Value& key, std::string_view what) {
  std::string_view name = Str(key);
  if (name.empty()) return Fail(absl::StrCat(what, " must not be empty"));
  if (name.find('.') != std::string_view::npos) {
    return Fail(absl::StrCat(what, " ", PyRepr(name), " must not contain '.'"));
  }
  return true;
}

bool Parser::NonNegativeInts(const Value& v, bool positive, SmallVector<int64_t>& out) {
  if (!ExpectArray(v)) return false;
  out.reserve(v.Size());
  for (size_t i = 0; i < v.Size(); ++i) {
    At at(*this, i);
    const Value& x = v[i];
    if (!x.IsInt64() || x.GetInt64() < (positive ? 1 : 0)) {
      return Fail(absl::StrCat("expected a ", positive ? "positive" : "non-negative",
                               " integer below 2^63, got ", x.IsNumber() ? "another number" : TypeName(x)));
    }
    out.push_back(x.GetInt64());
  }
  return true;
}

// The members of parameters, modules, providers.sharding and plan.modules
// came through StreamItem; `root` holds those maps empty, so only their type
// is checked here.
bool Parser::ParseRoot(const Value& root) {
  enum { kSchema, kMesh, kParameters, kRoot, kModules, kProviders, kPlan, kTemplates, kOverrides };
  static constexpr std::array<std::string_view, 9> kKeys = {
      "schema", "mesh", "parameters", "root", "modules", "providers", "plan", "templates", "overrides"};
  Fields<9> f;
  if (!ReadFields(root, kKeys, f)) return false;
  for (int k : {kSchema, kMesh, kParameters, kRoot, kModules}) {
    if (!Required(f[k], kKeys[k])) return false;
  }
  {
    At at(*this, "schema");
    if (!ExpectString(*f[kSchema])) return false;
    if (Str(*f[kSchema]) != "shardplan.v1") {
      return Fail(absl::StrCat("unsupported schema ", PyRepr(Str(*f[kSchema])), " (expected 'shardplan.v1')"));
    }
  }
  {
    At at(*this, "mesh");
    if (!ParseMesh(*f[kMesh])) return false;
  }
  {
    At at(*this, "parameters");
    if (!ExpectObject(*f[kParameters])) return false;
  }
  {
    At at(*this, "modules");
    if (!ExpectObject(*f[kModules])) return false;
  }
  if (auto error = ResolveReferences(doc_, module_by_name_, param_by_name_)) return Fail(*std::move(error));
  {
    At at(*this, "root");
    if (!ExpectString(*f[kRoot])) return false;
    if (auto error = ResolveRoot(doc_, Str(*f[kRoot]), module_by_name_)) return Fail(*std::move(error));
  }
  if (auto error = CheckTree(doc_, limits_)) return Fail(*std::move(error));
  if (f[kProviders]) {
    At at(*this, "providers");
    if (!ParseProviders(*f[kProviders])) return false;
  }
  if (f[kPlan]) {
    At at(*this, "plan");
    if (!ParsePlan(*f[kPlan])) return false;
  }
  for (int k : {kTemplates, kOverrides}) {
    if (f[k] && f[kPlan]) {
      At at(*this, kKeys[k]);
      return Fail(absl::StrCat("a document gives either 'plan' (a final plan to check) or 'templates'/'overrides' "
                               "(a plan to make), not both"));
    }
  }
  if (f[kTemplates]) {
    At at(*this, "templates");
    if (!ParseTemplates(*f[kTemplates])) return false;
  }
  if (f[kOverrides]) {
    At at(*this, "overrides");
    if (!ParseOverrides(*f[kOverrides])) return false;
  }
  return true;
}

bool Parser::ParseTemplates(const Value& v) {
  if (!ExpectArray(v)) return false;
  for (size_t i = 0; i < v.Size(); ++i) {
    At at(*this, i);
    enum { kAxis, kPrefix, kRules };
    static constexpr std::array<std::string_view, 3> kKeys = {"axis", "prefix", "rules"};
    Fields<3> f;
    if (!ReadFields(v[i], kKeys, f) || !Required(f[kAxis], "axis") || !Required(f[kRules], "rules")) return false;
    Template t;
    t.pointer = Pointer();
    {
      At at_axis(*this, "axis");
      if (!ExpectString(*f[kAxis])) return false;
      t.axis = Common(Str(*f[kAxis]));
      if (!doc_.IsMeshAxis(t.axis)) {
        return Fail(absl::StrCat("template axis ", PyRepr(Str(*f[kAxis])), " is not a mesh axis"));
      }
    }
    if (f[kPrefix]) {
      At at_prefix(*this, "prefix");
      if (!ExpectString(*f[kPrefix])) return false;
      t.prefix = std::string(Str(*f[kPrefix]));
    }
    At at_rules(*this, "rules");
    const Value& rules = *f[kRules];
    if (!ExpectObject(rules) || !CheckUniqueKeys(rules)) return false;
    for (auto m = rules.MemberBegin(); m != rules.MemberEnd(); ++m) {
      At at_rule(*this, Str(m->name));
      if (Str(m->name).empty()) return Fail("a template pattern must not be empty");
      if (!ExpectString(m->value)) return false;
      const std::optional<Style> style = ParseStyle(Str(m->value));
      if (!style) {
        return Fail(absl::StrCat("unknown template style ", PyRepr(Str(m->value)),
                                 " (expected colwise, colwise_gather_output, rowwise, rowwise_split_input, "
                                 "embedding_rowwise, embedding_colwise, packed_colwise, replicate, "
                                 "replicated_with_grad_allreduce, sequence_parallel, grouped_gemm, ep_router "
                                 "or moe_tp_experts)"));
      }
      t.rules.push_back({std::string(Str(m->name)), *style, Pointer()});
    }
    doc_.templates.push_back(std::move(t));
  }
  return true;
}

// Overrides are final-plan layouts (params required), one per FQN.
bool Parser::ParseOverrides(const Value& v) {
  if (!ExpectObject(v) || !CheckUniqueKeys(v)) return false;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    FqnLayout entry{doc_.names.Intern(Str(m->name)), {}};
    const Origin origin{Origin::Kind::kOverride, static_cast<uint32_t>(doc_.overrides.size())};
    if (!ParseLayout(m->value, /*in_plan=*/true, origin, entry.layout)) return false;
    doc_.overrides.push_back(std::move(entry));
  }
  return true;
}

bool Parser::ParseMesh(const Value& v) {
  if (!ExpectObject(v) || !CheckUniqueKeys(v)) return false;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    if (!m->value.IsInt64() || m->value.GetInt64() < 1) {
      return Fail("mesh axis size must be a positive integer below 2^63");
    }
    const NameId axis = doc_.names.Intern(Str(m->name));
    doc_.mesh.push_back({axis, m->value.GetInt64()});
    doc_.mesh_names.Insert(axis);
  }
  return true;
}

bool Parser::ParameterItem(std::string_view id, const Value& v) {
  At at(*this, id);
  {
    Parameter param;
    param.id = doc_.names.Intern(id);
    if (!param_by_name_.Define(param.id, static_cast<ParamId>(doc_.parameters.size()))) {
      return Fail(absl::StrCat("duplicate key ", PyRepr(id)));
    }
    enum { kShape, kDtype, kBlocks };
    static constexpr std::array<std::string_view, 3> kKeys = {"shape", "dtype", "blocks"};
    Fields<3> f;
    if (!ReadFields(v, kKeys, f)) return false;
    if (f[kShape]) {
      At at_shape(*this, "shape");
      param.shape.emplace();
      if (!NonNegativeInts(*f[kShape], /*positive=*/false, *param.shape)) return false;
    }
    if (const Value* dtype = f[kDtype]) {
      At at_dtype(*this, "dtype");
      if (!ExpectString(*dtype)) return false;
      const std::optional<Dtype> found = ParseDtype(Str(*dtype));
      if (!found) {
        return Fail(absl::StrCat("unknown dtype ", PyRepr(Str(*dtype)),
                                 " (expected float32, float16, bfloat16, float8_e4m3fn, "
                                 "float8_e5m2, int8, int32, int64 or bool)"));
      }
      param.dtype = *found;
    }
    if (f[kBlocks]) {
      At at_blocks(*this, "blocks");
      if (!NonNegativeInts(*f[kBlocks], /*positive=*/true, param.blocks)) return false;
      if (!param.shape || param.shape->size() != param.blocks.size()) {
        return Fail("blocks must give one positive integer per dim of a known shape");
      }
      for (size_t d = 0; d < param.blocks.size(); ++d) {
        if ((*param.shape)[d] % param.blocks[d] != 0) {
          At at_dim(*this, d);
          return Fail(absl::StrCat("dim ", d, " of size ", (*param.shape)[d],
                                   " is not a multiple of its block size ", param.blocks[d]));
        }
      }
    }
    doc_.parameters.push_back(std::move(param));
  }
  return true;
}

bool Parser::ModuleItem(std::string_view id, const Value& v) {
  At at(*this, id);
  const ModuleId index = static_cast<ModuleId>(doc_.modules.size());
  Module& module = doc_.modules.emplace_back();
  module.id = doc_.names.Intern(id);
  if (!module_by_name_.Define(module.id, index)) return Fail(absl::StrCat("duplicate key ", PyRepr(id)));
  return ParseModule(v, index, module);
}

// Child and parameter references name ids that may be defined later in the
// document: ParseModule records the NameId of each referenced id in place of
// the index, and ResolveReferences (document_checks.h) replaces them once
// every id is known.
bool Parser::ParseModule(const Value& v, ModuleId index, Module& module) {
  enum { kType, kForward, kChildren, kParams, kParallel, kFamily };
  static constexpr std::array<std::string_view, 6> kKeys = {"type",   "forward",  "children",
                                                           "params", "parallel", "family"};
  Fields<6> f;
  if (!ReadFields(v, kKeys, f)) return false;
  if (const Value* type = f[kType]) {
    At at(*this, "type");
    if (!ExpectString(*type)) return false;
    module.type = Common(Str(*type));
  }
  if (f[kForward]) {
    At at(*this, "forward");
    if (!ParseForward(*f[kForward], module)) return false;
  }
  if (f[kChildren]) {
    At at(*this, "children");
    const Value& children = *f[kChildren];
    if (!ExpectObject(children) || !CheckUniqueKeys(children)) return false;
    module.children.reserve(children.MemberCount());
    for (auto c = children.MemberBegin(); c != children.MemberEnd(); ++c) {
      At at_child(*this, Str(c->name));
      if (!NonEmptyName(c->name, "child name") || !ExpectString(c->value)) return false;
      // The target's id for now; ResolveReferences makes it an index.
      module.children.emplace_back(Common(Str(c->name)), doc_.names.Intern(Str(c->value)));
    }
  }
  if (f[kParams]) {
    At at(*this, "params");
    const Value& params = *f[kParams];
    if (!ExpectObject(params) || !CheckUniqueKeys(params)) return false;
    module.params.reserve(params.MemberCount());
    const NameSet children(module.children, [](const auto& c) { return c.first; });
    for (auto p = params.MemberBegin(); p != params.MemberEnd(); ++p) {
      At at_param(*this, Str(p->name));
      if (!NonEmptyName(p->name, "parameter name") || !ExpectString(p->value)) return false;
      NameId name = Common(Str(p->name));
      if (children.Contains(name)) {
        return Fail(absl::StrCat("name ", PyRepr(Str(p->name)), " is both a child and a parameter"));
      }
      // The parameter's id for now; ResolveReferences makes it an index.
      module.params.emplace_back(name, doc_.names.Intern(Str(p->value)));
    }
  }
  if (f[kParallel]) {
    At at(*this, "parallel");
    if (!ParseParallel(*f[kParallel], {Origin::Kind::kModuleParallel, index}, module.parallel)) return false;
  }
  if (f[kFamily]) {
    At at(*this, "family");
    module.family = std::make_unique<Family>();
    doc_.family_modules.push_back(index);
    if (!ParseFamily(*f[kFamily], index, *module.family)) return false;
  }
  return true;
}

// As the reference reads a signature: "**name" is var-keyword, "*name"
// var-positional, anything else a plain parameter; names are not validated.
bool Parser::ParseForward(const Value& v, Module& module) {
  if (!ExpectArray(v)) return false;
  for (size_t i = 0; i < v.Size(); ++i) {
    At at(*this, i);
    if (!ExpectString(v[i])) return false;
    const auto [name, kind] = ReadForwardArg(Str(v[i]));
    AppendForward(module, Common(name), kind);
  }
  return true;
}

bool Parser::ParseFamily(const Value& v, ModuleId index, Family& family) {
  enum { kParallel, kSharding, kCached };
  static constexpr std::array<std::string_view, 3> kKeys = {"parallel", "sharding", "cached"};
  Fields<3> f;
  if (!ReadFields(v, kKeys, f)) return false;
  if (const Value* parallel = f[kParallel]) {
    At at(*this, "parallel");
    if (!Expect(*parallel, parallel->IsBool(), "a boolean")) return false;
    family.parallel = parallel->GetBool();
  }
  if (f[kSharding] && !f[kSharding]->IsNull()) {
    At at(*this, "sharding");
    family.sharding.emplace();
    if (!ParseLayout(*f[kSharding], /*in_plan=*/false, {Origin::Kind::kFamily, index}, *family.sharding)) return false;
  }
  if (f[kCached] && !f[kCached]->IsNull()) {
    At at(*this, "cached");
    enum { kCachedSharding, kCachedParallel };
    static constexpr std::array<std::string_view, 2> kCachedKeys = {"sharding", "parallel"};
    Fields<2> c;
    if (!ReadFields(*f[kCached], kCachedKeys, c) || !Required(c[kCachedSharding], "sharding")) return false;
    family.cached.emplace();
    {
      At at_sharding(*this, "sharding");
      if (!ParseLayout(*c[kCachedSharding], /*in_plan=*/false, {Origin::Kind::kCachedSharding, index},
                       family.cached->sharding)) {
        return false;
      }
    }
    if (c[kCachedParallel]) {
      At at_parallel(*this, "parallel");
      if (!ParseParallel(*c[kCachedParallel], {Origin::Kind::kCachedParallel, index}, family.cached->parallel)) {
        return false;
      }
    }
  }
  return true;
}

bool Parser::SameParallel(const Value& v, const ParallelSpec& spec) const {
  if (!v.IsObject() || v.MemberCount() != 2) return false;
  const json::Member& kind = v.MemberBegin()[0];
  const json::Member& axes = v.MemberBegin()[1];
  if (Str(kind.name) != "binding_kind" || !kind.value.IsString() ||
      !SameText(Str(kind.value), doc_.Name(spec.binding_kind)) || Str(axes.name) != "axes" || !axes.value.IsArray() ||
      axes.value.Size() != spec.axes.size()) {
    return false;
  }
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    if (!axes.value[i].IsString() || !SameText(Str(axes.value[i]), doc_.Name(spec.axes[i]))) return false;
  }
  return true;
}

bool Parser::ParseParallel(const Value& v, Origin origin, std::optional<ParallelSpec>& out) {
  if (v.IsNull()) return true;
  if (last_parallel_ && SameParallel(v, *last_parallel_)) {
    out = *last_parallel_;
    out->origin = origin;
    return true;
  }
  enum { kBindingKind, kAxes };
  static constexpr std::array<std::string_view, 2> kKeys = {"binding_kind", "axes"};
  Fields<2> f;
  if (!ReadFields(v, kKeys, f) || !Required(f[kBindingKind], "binding_kind")) return false;
  ParallelSpec spec;
  spec.origin = origin;
  {
    At at(*this, "binding_kind");
    if (!ExpectString(*f[kBindingKind])) return false;
    if (Str(*f[kBindingKind]).empty()) return Fail("binding_kind must not be empty");
    spec.binding_kind = Common(Str(*f[kBindingKind]));
  }
  if (const Value* axes = f[kAxes]) {
    At at(*this, "axes");
    if (!ExpectArray(*axes)) return false;
    for (size_t i = 0; i < axes->Size(); ++i) {
      At at_axis(*this, i);
      if (!ExpectString((*axes)[i])) return false;
      spec.axes.push_back(Common(Str((*axes)[i])));
    }
  }
  last_parallel_ = spec;
  out = std::move(spec);
  return true;
}

bool Parser::ParseNamedPlacements(const Value& v, NamedPlacements& out) {
  if (!ExpectObject(v) || !CheckUniqueKeys(v)) return false;
  out.reserve(v.MemberCount());
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    if (!ExpectString(m->value)) return false;
    std::optional<Placement> placement = ParsePlacement(Str(m->value));
    if (!placement) {
      return Fail(absl::StrCat("bad placement ", PyRepr(Str(m->value)),
                               " (expected S(dim), R, P or P(sum|avg|max|min|prod))"));
    }
    out.push_back({Common(Str(m->name)), *placement});
  }
  return true;
}

bool Parser::ParsePlacementMap(const Value& v, PlacementMap& out) {
  if (!ExpectObject(v) || !CheckUniqueKeys(v)) return false;
  out.reserve(v.MemberCount());
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    PlacementEntry entry{Common(Str(m->name)), {}};
    if (!ParseNamedPlacements(m->value, entry.placements)) return false;
    out.push_back(std::move(entry));
  }
  return true;
}

bool Parser::ParseLayout(const Value& v, bool in_plan, Origin origin, Layout& out) {
  enum { kParams, kInSrc, kInDst, kOutSrc, kOutDst, kOutNames, kFirstLegacy };
  static constexpr std::array<std::string_view, 10> kKeys = {
      "params",  "in_src",           "in_dst",        "out_src",      "out_dst",
      "out_names", "local_compute_fn", "inner_wrapper", "inner_target", "region_dispatch"};
  Fields<10> f;
  if (!ReadFields(v, kKeys, f)) return false;
  LayoutBody body;
  MapRef* const maps[] = {&body.params, &body.in_src, &body.in_dst, &body.out_src, &body.out_dst};
  for (int k = kParams; k <= kOutDst; ++k) {
    if (f[k] == nullptr || f[k]->IsNull()) {
      if (in_plan && k == kParams) {
        At at(*this, kKeys[k]);
        return Fail("a plan layout must give params as an object");
      }
      continue;
    }
    At at(*this, kKeys[k]);
    PlacementMap map;
    if (!ParsePlacementMap(*f[k], map)) return false;
    *maps[k] = doc_.maps->Intern(std::move(map));
  }
  if (const Value* names = f[kOutNames]; names && !names->IsNull()) {
    At at(*this, "out_names");
    if (!ExpectArray(*names)) return false;
    body.out_names.emplace();
    for (size_t i = 0; i < names->Size(); ++i) {
      At at_name(*this, i);
      if (!ExpectString((*names)[i])) return false;
      body.out_names->push_back(Common(Str((*names)[i])));
    }
  }
  for (size_t k = kFirstLegacy; k < kKeys.size(); ++k) {
    if (f[k] == nullptr) continue;
    At at(*this, kKeys[k]);
    if (!CheckUniqueKeysDeep(*f[k])) return false;
    if (!f[k]->IsNull() && body.legacy_field == kNoName) body.legacy_field = doc_.names.Intern(kKeys[k]);
  }
  out = {doc_.maps->Intern(std::move(body)), origin};
  return true;
}

bool Parser::FqnLayoutItem(bool in_plan, std::string_view fqn, const Value& v, bool unread) {
  At at(*this, fqn);
  FqnLayout entry{doc_.names.Intern(fqn), {}};
  if (!(in_plan ? plan_fqns_ : provider_fqns_).Insert(entry.fqn)) return Fail(absl::StrCat("duplicate key ", PyRepr(fqn)));
  const Origin origin = in_plan ? Origin{Origin::Kind::kPlan, static_cast<uint32_t>(doc_.plan ? doc_.plan->size() : 0)}
                                : Origin{Origin::Kind::kProvider, static_cast<uint32_t>(doc_.model_providers.size())};
  // An unread value repeats the member before it in this map, whose layout
  // is the last one: the same text parses to the same layout.
  if (unread) {
    entry.layout = last_layout_;
    entry.layout.origin = origin;
  } else {
    if (!ParseLayout(v, in_plan, origin, entry.layout)) return false;
    last_layout_ = entry.layout;
  }
  if (!in_plan) {
    doc_.model_providers.push_back(std::move(entry));
  } else {
    StartPlan();
    doc_.plan->push_back(std::move(entry));
  }
  return true;
}

bool Parser::ParseProviders(const Value& v) {
  enum { kSharding, kNative };
  static constexpr std::array<std::string_view, 2> kKeys = {"sharding", "native"};
  Fields<2> f;
  if (!ReadFields(v, kKeys, f)) return false;
  if (f[kSharding]) {
    At at(*this, "sharding");
    if (!ExpectObject(*f[kSharding])) return false;
  }
  if (const Value* native = f[kNative]) {
    At at(*this, "native");
    if (!ExpectArray(*native)) return false;
    for (size_t i = 0; i < native->Size(); ++i) {
      At at_request(*this, i);
      enum { kMatch, kRequestSharding, kParallel };
      static constexpr std::array<std::string_view, 3> kRequestKeys = {"match", "sharding", "parallel"};
      Fields<3> r;
      if (!ReadFields((*native)[i], kRequestKeys, r) || !Required(r[kMatch], "match") ||
          !Required(r[kRequestSharding], "sharding")) {
        return false;
      }
      NativeRequest request;
      request.pointer = Pointer();
      {
        At at_match(*this, "match");
        const Value& match = *r[kMatch];
        if (!ExpectArray(match)) return false;
        for (size_t k = 0; k < match.Size(); ++k) {
          At at_pattern(*this, k);
          if (!ExpectString(match[k])) return false;
          request.match.push_back(doc_.names.Intern(Str(match[k])));
        }
      }
      {
        At at_sharding(*this, "sharding");
        const Origin origin{Origin::Kind::kNativeSharding, static_cast<uint32_t>(i)};
        if (!ParseLayout(*r[kRequestSharding], /*in_plan=*/false, origin, request.sharding)) return false;
      }
      if (r[kParallel]) {
        At at_parallel(*this, "parallel");
        const Origin origin{Origin::Kind::kNativeParallel, static_cast<uint32_t>(i)};
        if (!ParseParallel(*r[kParallel], origin, request.parallel)) return false;
      }
      doc_.native.push_back(std::move(request));
    }
  }
  return true;
}

bool Parser::ParsePlan(const Value& v) {
  static constexpr std::array<std::string_view, 1> kKeys = {"modules"};
  Fields<1> f;
  if (!ReadFields(v, kKeys, f) || !Required(f[0], "modules")) return false;
  At at(*this, "modules");
  StartPlan();
  return ExpectObject(*f[0]);
}

void Parser::Prefetch(const std::vector<Item>& items, Section section) const {
  for (const Item& item : items) {
    doc_.names.Prefetch(item.key);
    const Value& v = item.value;
    if (section != Section::kModules || !v.IsObject()) continue;
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      if (!m->value.IsObject() || (Str(m->name) != "children" && Str(m->name) != "params")) continue;
      for (auto r = m->value.MemberBegin(); r != m->value.MemberEnd(); ++r) {
        if (r->value.IsString()) doc_.names.Prefetch(Str(r->value));
      }
    }
  }
}

bool Parser::StreamItem(Section section, const Item& item) {
  const auto& [key, v, unread] = item;
  switch (section) {
    case Section::kParameters: {
      At at(*this, "parameters");
      return ParameterItem(key, v);
    }
    case Section::kModules: {
      At at(*this, "modules");
      return ModuleItem(key, v);
    }
    case Section::kProviders: {
      At at(*this, "providers");
      At at_map(*this, "sharding");
      return FqnLayoutItem(/*in_plan=*/false, key, v, unread);
    }
    case Section::kPlan: {
      At at(*this, "plan");
      At at_map(*this, "modules");
      return FqnLayoutItem(/*in_plan=*/true, key, v, unread);
    }
  }
  return false;
}

// Reads the document's top level, and the members of the four maps that
// grow with the model (parameters, modules, providers.sharding and
// plan.modules) one at a time, each as a small DOM handed to the parser and
// then released: no DOM of the whole document is ever built. Everything
// else goes into the skeleton, where those maps stand empty.
class Scanner {
 public:
  Scanner(std::string_view text, Parser& parser, int max_depth)
      : text_(text), reader_(text, max_depth), parser_(parser), max_depth_(max_depth) {}

  // False on a syntax error (reader().error()) or when the parser refused an
  // item (parser_failed()).
  bool Run(Value& skeleton) {
    reader_.SkipSpace();
    if (reader_.Peek() == '\0') return reader_.Fail(json::Error::kDocumentEmpty);
    if (reader_.Peek() != '{') {
      // Not an object: one value, which ParseRoot then refuses.
      if (!reader_.ReadValue(skeleton, 0)) return false;
    } else {
      std::vector<json::Member> members;
      const bool ok = Members(1, [&](std::string_view key) {
        Value value;
        if (key == "parameters" && reader_.Peek() == '{') {
          if (!StreamMap(Parser::Section::kParameters, 2)) return false;
          value = Value::Object(nullptr, 0);
        } else if (key == "modules" && reader_.Peek() == '{') {
          if (!StreamMap(Parser::Section::kModules, 2)) return false;
          value = Value::Object(nullptr, 0);
        } else if ((key == "providers" || key == "plan") && reader_.Peek() == '{') {
          const bool plan = key == "plan";
          std::vector<json::Member> inner_members;
          const bool inner_ok = Members(2, [&](std::string_view inner) {
            Value member;
            if (inner == (plan ? "modules" : "sharding") && reader_.Peek() == '{') {
              if (!StreamMap(plan ? Parser::Section::kPlan : Parser::Section::kProviders, 3)) return false;
              member = Value::Object(nullptr, 0);
            } else if (!reader_.ReadValue(member, 2)) {
              return false;
            }
            inner_members.push_back({Value::String(inner), member});
            return true;
          });
          if (!inner_ok) return false;
          value = reader_.MakeObject(inner_members);
        } else if (!reader_.ReadValue(value, 1)) {
          return false;
        }
        members.push_back({Value::String(key), value});
        return true;
      });
      if (!ok) return false;
      skeleton = reader_.MakeObject(members);
    }
    reader_.SkipSpace();
    return reader_.Peek() == '\0' || reader_.Fail(json::Error::kRootNotSingular);
  }

  const json::Reader& reader() const { return reader_; }
  bool parser_failed() const { return parser_failed_; }

 private:
  // The steps of reading an object, shared by Members and StreamMap, each
  // false on a syntax error (recorded in the reader).
  //
  // Past the '{' at the cursor, of an object nesting `depth` deep; `empty`
  // when its '}' follows at once (and was read).
  bool OpenObject(int depth, bool& empty) {
    reader_.Skip();  // '{'
    if (depth > max_depth_) return reader_.Fail(json::Error::kTooDeep);
    reader_.SkipSpace();
    empty = reader_.Peek() == '}';
    if (empty) reader_.Skip();
    return true;
  }
  // A member's name and colon; the cursor is left on its value.
  static bool ReadName(json::Reader& r, std::string_view& key) {
    r.SkipSpace();
    if (r.Peek() != '"') return r.Fail(json::Error::kObjectMissName);
    if (!r.ReadString(key)) return false;
    r.SkipSpace();
    if (r.Peek() != ':') return r.Fail(json::Error::kObjectMissColon);
    r.Skip();
    r.SkipSpace();
    return true;
  }
  // What follows a member: ',' (`last` false) or the object's '}' (true).
  static bool ReadSeparator(json::Reader& r, bool& last) {
    r.SkipSpace();
    last = r.Peek() == '}';
    if (r.Peek() != ',' && !last) return r.Fail(json::Error::kObjectMissCommaOrCurlyBracket);
    r.Skip();
    return true;
  }
  // Reads the members of the object at the cursor, which nests `depth`
  // deep, calling member(key) with the cursor on each value.
  template <typename Member>
  bool Members(int depth, Member&& member) {
    bool last = false;
    if (!OpenObject(depth, last)) return false;
    while (!last) {
      std::string_view key;
      if (!ReadName(reader_, key) || !member(key) || !ReadSeparator(reader_, last)) return false;
    }
    return true;
  }
  // Hands each member of the map at the cursor to the parser, the map
  // nesting `depth` deep. Reading the members and parsing them overlap: a
  // pipeline reads batches of members, each with its own reader and arena,
  // while the parser takes the batches before them in document order. The
  // first error in document order wins, as in a serial read: a batch ends
  // at a syntax error, the parser sees the members before it first, and
  // reading stops once the parser has failed.
  bool StreamMap(Parser::Section section, int depth) {
    // What the producing stage reads and writes member after member, on a
    // cache line of its own. Among this frame's other locals it could share
    // a line with what the consuming stage, on the other thread, writes:
    // when a change of layout types moved the frames, the CLI on two threads
    // took 10-15% longer on mid-size documents, and one thread did not.
    struct alignas(64) ProducerState {
      bool done = false;
      size_t next = 0, offset = 0;
      // The last member's value text: an object value spelled the same way
      // ends where its copy does and parses to the same layout, so a layout
      // map's repeats are compared, not read (Parser::Item::unread).
      std::string_view previous;
    } state;
    if (!OpenObject(depth, state.done)) return false;
    if (state.done) return true;
    struct Batch {
      explicit Batch(std::string_view text, int max_depth) : reader(text, max_depth), mark(reader.GetMark()) {}
      json::Reader reader;
      json::Reader::Mark mark;
      std::vector<Parser::Item> items;
      bool failed = false;  // the batch ends at reader's syntax error
    };
    constexpr size_t kLive = 4, kBatchItems = 256;
    std::vector<std::unique_ptr<Batch>> ring;
    for (size_t i = 0; i < kLive; ++i) ring.push_back(std::make_unique<Batch>(text_, max_depth_));
    state.offset = reader_.offset();
    const bool layouts = section == Parser::Section::kProviders || section == Parser::Section::kPlan;
    const Batch* failed_batch = nullptr;
    std::atomic<bool> parser_failed{false};
    auto produce = [&]() -> Batch* {
      if (state.done || parser_failed.load(std::memory_order_relaxed)) return nullptr;
      Batch& batch = *ring[state.next++ % kLive];
      json::Reader& r = batch.reader;
      r.Release(batch.mark);
      r.Seek(state.offset);
      batch.items.clear();
      batch.failed = false;
      while (batch.items.size() < kBatchItems && !state.done) {
        std::string_view key;
        Value value;
        if (!ReadName(r, key)) {
          batch.failed = true;
          break;
        }
        const size_t start = r.offset();
        const bool repeat = layouts && !state.previous.empty() && state.previous.front() == '{' &&
                            text_.substr(start, state.previous.size()) == state.previous;
        if (repeat) {
          r.Seek(start + state.previous.size());
        } else if (!r.ReadValue(value, depth)) {
          batch.failed = true;
          break;
        }
        state.previous = text_.substr(start, r.offset() - start);
        // Parsed before a separator error.
        batch.items.push_back({key, value, repeat});
        if (!ReadSeparator(r, state.done)) {
          batch.failed = true;
          break;
        }
      }
      state.done = state.done || batch.failed;
      state.offset = r.offset();
      return &batch;
    };
    auto consume = [&](Batch& batch) {
      if (parser_failed.load(std::memory_order_relaxed)) return;
      parser_.Prefetch(batch.items, section);
      for (const Parser::Item& item : batch.items) {
        if (!parser_.StreamItem(section, item)) {
          parser_failed.store(true, std::memory_order_relaxed);
          return;
        }
      }
      if (batch.failed) failed_batch = &batch;
    };
    Pipeline<Batch>(kLive, produce, consume);
    if (parser_failed.load()) {
      parser_failed_ = true;
      return false;
    }
    if (failed_batch != nullptr) return reader_.FailAt(failed_batch->reader.error(), failed_batch->reader.error_offset());
    reader_.Seek(state.offset);
    return true;
  }

  const std::string_view text_;
  json::Reader reader_;
  Parser& parser_;
  const int max_depth_;
  bool parser_failed_ = false;
};

std::string LineColumn(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat("line ", line, ", column ", column);
}

}  // namespace

ParseResult ParseDocument(std::string_view json, const Limits& limits) {
  ParseResult result;
  auto invalid = [&](const std::string& message, const std::string& pointer) {
    result.error = MakeDiagnostic(Code::kInvalidDocument, Mode::kCheck, {.pointer = pointer}, {message});
    return std::move(result);
  };

  // The first NUL byte or ill-formed sequence, whichever comes first.
  const size_t nul = json.find('\0');
  if (const size_t valid = utf8::ValidPrefix(json.substr(0, nul)); valid != json.size()) {
    return invalid(absl::StrCat(valid == nul ? "NUL byte" : "invalid UTF-8", " at ", LineColumn(json, valid),
                                " (offset ", valid, ")"),
                   "");
  }
  auto document = std::make_unique<Document>();
  // Documents spell about one distinct name per 70 to 100 bytes; sizing the
  // table once avoids rehashing millions of names as it grows.
  document->names.Reserve(json.size() / 96);
  // The same for the large vectors, whose doubling would copy them and
  // touch fresh pages each time. A generous estimate costs address space
  // only: the pages past the last element are never touched (so they are
  // advised for huge pages, not touched).
  ReserveAdvised(document->parameters, json.size() / 128);
  ReserveAdvised(document->modules, json.size() / 128);
  // Providers, and plan entries if any: guessed at one per 256 bytes of text.
  const size_t fqn_layout_room = json.size() / 256;
  ReserveAdvised(document->model_providers, fqn_layout_room);
  Parser parser(*document, limits, fqn_layout_room);
  Scanner scanner(json, parser, limits.max_json_depth);
  Value skeleton;
  if (!scanner.Run(skeleton) && !scanner.parser_failed()) {
    const json::Reader& reader = scanner.reader();
    const std::string at = LineColumn(json, reader.error_offset());
    if (reader.error() == json::Error::kTooDeep) {
      return invalid(absl::StrCat("the document nests arrays and objects deeper than ", limits.max_json_depth,
                                  " levels (at ", at, ")"),
                     "");
    }
    return invalid(absl::StrCat("malformed JSON at ", at, ": ", json::ErrorMessage(reader.error())), "");
  }
  if (scanner.parser_failed() || !parser.ParseRoot(skeleton)) {
    result.error = InvalidDocument({parser.error(), parser.error_pointer()});
    return result;
  }
  result.document = std::move(document);
  return result;
}

}  // namespace shardplan

#include "core/parse.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/name_set.h"
#include "core/pyrepr.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

namespace shardplan {
namespace {

using rapidjson::Value;

constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;

// Forwards SAX events to the DOM builder, refusing nesting beyond a limit so
// that hostile input cannot exhaust memory or stack later on.
template <typename Handler>
class DepthLimitedHandler {
 public:
  DepthLimitedHandler(Handler& inner, int max_depth) : inner_(inner), max_depth_(max_depth) {}
  bool Null() { return inner_.Null(); }
  bool Bool(bool b) { return inner_.Bool(b); }
  bool Int(int i) { return inner_.Int(i); }
  bool Uint(unsigned u) { return inner_.Uint(u); }
  bool Int64(int64_t i) { return inner_.Int64(i); }
  bool Uint64(uint64_t u) { return inner_.Uint64(u); }
  bool Double(double d) { return inner_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return inner_.RawNumber(s, n, copy); }
  bool String(const char* s, rapidjson::SizeType n, bool copy) { return inner_.String(s, n, copy); }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) { return inner_.Key(s, n, copy); }
  bool StartObject() { return Enter() && inner_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) {
    --depth_;
    return inner_.EndObject(n);
  }
  bool StartArray() { return Enter() && inner_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) {
    --depth_;
    return inner_.EndArray(n);
  }
  bool too_deep() const { return too_deep_; }

 private:
  bool Enter() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }
  Handler& inner_;
  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
};

std::string_view TypeName(const Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "a boolean";
  if (v.IsNumber()) return "a number";
  if (v.IsString()) return "a string";
  if (v.IsArray()) return "an array";
  return "an object";
}

std::string_view Str(const Value& v) { return std::string_view(v.GetString(), v.GetStringLength()); }

constexpr std::string_view kLegacyFields[] = {"local_compute_fn", "inner_wrapper", "inner_target",
                                              "region_dispatch"};

constexpr std::pair<std::string_view, Dtype> kDtypes[] = {
    {"float32", Dtype::kFloat32},          {"float16", Dtype::kFloat16},
    {"bfloat16", Dtype::kBfloat16},        {"float8_e4m3fn", Dtype::kFloat8E4m3fn},
    {"float8_e5m2", Dtype::kFloat8E5m2},   {"int8", Dtype::kInt8},
    {"int32", Dtype::kInt32},              {"int64", Dtype::kInt64},
    {"bool", Dtype::kBool},
};

class Parser {
 public:
  Parser(Document& doc, const Limits& limits) : doc_(doc), limits_(limits) {}

  bool ParseRoot(const Value& root);
  const std::string& error() const { return error_; }
  const std::string& error_pointer() const { return error_pointer_; }

 private:
  // Appends one reference token to the current pointer for its lifetime.
  class At {
   public:
    At(Parser& parser, std::string_view token) : parser_(parser), size_(parser.pointer_.size()) {
      parser_.pointer_ += '/';
      parser_.pointer_ += JsonPointerToken(token);
    }
    At(Parser& parser, size_t index) : At(parser, std::to_string(index)) {}
    ~At() { parser_.pointer_.resize(size_); }

   private:
    Parser& parser_;
    size_t size_;
  };

  bool Fail(std::string message) {
    error_ = std::move(message);
    error_pointer_ = pointer_;
    return false;
  }
  bool Expect(const Value& v, bool ok, std::string_view what) {
    return ok || Fail(absl::StrCat("expected ", what, ", got ", TypeName(v)));
  }
  bool ExpectObject(const Value& v) { return Expect(v, v.IsObject(), "an object"); }
  bool ExpectArray(const Value& v) { return Expect(v, v.IsArray(), "an array"); }
  bool ExpectString(const Value& v) { return Expect(v, v.IsString(), "a string"); }

  // Every key unique and, when `allowed` is non-empty, one of `allowed`.
  bool CheckKeys(const Value& obj, std::initializer_list<std::string_view> allowed);
  bool CheckUniqueKeys(const Value& obj);
  // Fails on a duplicate key anywhere inside `v` (values we do not model).
  bool CheckUniqueKeysDeep(const Value& v);
  bool NonEmptyName(const Value& key, std::string_view what);

  bool ParseMesh(const Value& v);
  bool ParseParameters(const Value& v);
  bool ParseModules(const Value& v);
  bool ParseModule(const Value& v, Module& module);
  bool ParseForward(const Value& v, Module& module);
  bool ParseFamily(const Value& v, Family& family);
  bool ParseParallel(const Value& v, std::optional<ParallelSpec>& out);
  bool ParseLayout(const Value& v, bool in_plan, Layout& out);
  bool ParsePlacementMap(const Value& v, PlacementMap& out);
  bool ParseNamedPlacements(const Value& v, NamedPlacements& out);
  bool ParseProviders(const Value& v);
  bool ParsePlan(const Value& v);
  bool ParseFqnLayouts(const Value& v, bool in_plan, std::vector<FqnLayout>& out);
  bool CheckTree();
  bool NonNegativeInts(const Value& v, bool positive, std::vector<int64_t>& out);

  Document& doc_;
  const Limits& limits_;
  std::string pointer_;
  std::string error_;
  std::string error_pointer_;
  absl::flat_hash_map<std::string_view, ParamId> param_ids_;
  absl::flat_hash_map<std::string_view, ModuleId> module_ids_;
};

bool Parser::CheckUniqueKeys(const Value& obj) {
  const auto n = obj.MemberCount();
  if (n <= 16) {
    for (auto a = obj.MemberBegin(); a != obj.MemberEnd(); ++a) {
      for (auto b = obj.MemberBegin(); b != a; ++b) {
        if (a->name == b->name) {
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

bool Parser::CheckKeys(const Value& obj, std::initializer_list<std::string_view> allowed) {
  if (!CheckUniqueKeys(obj)) return false;
  for (auto m = obj.MemberBegin(); m != obj.MemberEnd(); ++m) {
    std::string_view key = Str(m->name);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      At at(*this, key);
      std::string list;
      for (std::string_view a : allowed) absl::StrAppend(&list, list.empty() ? "" : ", ", a);
      return Fail(absl::StrCat("unknown key ", PyRepr(key), " (expected one of: ", list, ")"));
    }
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
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
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

bool Parser::NonNegativeInts(const Value& v, bool positive, std::vector<int64_t>& out) {
  if (!ExpectArray(v)) return false;
  out.reserve(v.Size());
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
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

bool Parser::ParseRoot(const Value& root) {
  if (!ExpectObject(root)) return false;
  if (!CheckKeys(root, {"schema", "mesh", "parameters", "root", "modules", "providers", "plan"})) {
    return false;
  }
  for (std::string_view required : {"schema", "mesh", "parameters", "root", "modules"}) {
    if (!root.HasMember(rapidjson::StringRef(required.data(), required.size()))) {
      return Fail(absl::StrCat("missing required key ", PyRepr(required)));
    }
  }
  {
    At at(*this, "schema");
    const Value& schema = root["schema"];
    if (!ExpectString(schema)) return false;
    if (Str(schema) != "shardplan.v1") {
      return Fail(absl::StrCat("unsupported schema ", PyRepr(Str(schema)), " (expected 'shardplan.v1')"));
    }
  }
  {
    At at(*this, "mesh");
    if (!ParseMesh(root["mesh"])) return false;
  }
  {
    At at(*this, "parameters");
    if (!ParseParameters(root["parameters"])) return false;
  }
  {
    At at(*this, "modules");
    if (!ParseModules(root["modules"])) return false;
  }
  {
    At at(*this, "root");
    const Value& r = root["root"];
    if (!ExpectString(r)) return false;
    auto it = module_ids_.find(Str(r));
    if (it == module_ids_.end()) return Fail(absl::StrCat("unknown module id ", PyRepr(Str(r))));
    doc_.root = it->second;
  }
  {
    At at(*this, "modules");
    if (!CheckTree()) return false;
  }
  if (auto it = root.FindMember("providers"); it != root.MemberEnd()) {
    At at(*this, "providers");
    if (!ParseProviders(it->value)) return false;
  }
  if (auto it = root.FindMember("plan"); it != root.MemberEnd()) {
    At at(*this, "plan");
    if (!ParsePlan(it->value)) return false;
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

bool Parser::ParseParameters(const Value& v) {
  if (!ExpectObject(v)) return false;
  doc_.parameters.reserve(v.MemberCount());
  param_ids_.reserve(v.MemberCount());
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    if (!param_ids_.emplace(Str(m->name), static_cast<ParamId>(doc_.parameters.size())).second) {
      return Fail(absl::StrCat("duplicate key ", PyRepr(Str(m->name))));
    }
    const Value& p = m->value;
    if (!ExpectObject(p) || !CheckKeys(p, {"shape", "dtype", "blocks"})) return false;
    Parameter param;
    param.id = doc_.names.Intern(Str(m->name));
    if (auto it = p.FindMember("shape"); it != p.MemberEnd()) {
      At at_shape(*this, "shape");
      param.shape.emplace();
      if (!NonNegativeInts(it->value, /*positive=*/false, *param.shape)) return false;
    }
    if (auto it = p.FindMember("dtype"); it != p.MemberEnd()) {
      At at_dtype(*this, "dtype");
      if (!ExpectString(it->value)) return false;
      auto found = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                [&](const auto& d) { return d.first == Str(it->value); });
      if (found == std::end(kDtypes)) {
        return Fail(absl::StrCat("unknown dtype ", PyRepr(Str(it->value)),
                                 " (expected float32, float16, bfloat16, float8_e4m3fn, "
                                 "float8_e5m2, int8, int32, int64 or bool)"));
      }
      param.dtype = found->second;
    }
    if (auto it = p.FindMember("blocks"); it != p.MemberEnd()) {
      At at_blocks(*this, "blocks");
      if (!NonNegativeInts(it->value, /*positive=*/true, param.blocks)) return false;
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

bool Parser::ParseModules(const Value& v) {
  if (!ExpectObject(v)) return false;
  doc_.modules.resize(v.MemberCount());
  module_ids_.reserve(v.MemberCount());
  ModuleId index = 0;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m, ++index) {
    if (!module_ids_.emplace(Str(m->name), index).second) {
      At at(*this, Str(m->name));
      return Fail(absl::StrCat("duplicate key ", PyRepr(Str(m->name))));
    }
    doc_.modules[index].id = doc_.names.Intern(Str(m->name));
  }
  index = 0;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m, ++index) {
    At at(*this, Str(m->name));
    if (!ParseModule(m->value, doc_.modules[index])) return false;
  }
  return true;
}

bool Parser::ParseModule(const Value& v, Module& module) {
  if (!ExpectObject(v) || !CheckKeys(v, {"type", "forward", "children", "params", "parallel", "family"})) {
    return false;
  }
  if (auto it = v.FindMember("type"); it != v.MemberEnd()) {
    At at(*this, "type");
    if (!ExpectString(it->value)) return false;
    module.type = doc_.names.Intern(Str(it->value));
  }
  if (auto it = v.FindMember("forward"); it != v.MemberEnd()) {
    At at(*this, "forward");
    if (!ParseForward(it->value, module)) return false;
  }
  if (auto it = v.FindMember("children"); it != v.MemberEnd()) {
    At at(*this, "children");
    const Value& children = it->value;
    if (!ExpectObject(children) || !CheckUniqueKeys(children)) return false;
    module.children.reserve(children.MemberCount());
    for (auto c = children.MemberBegin(); c != children.MemberEnd(); ++c) {
      At at_child(*this, Str(c->name));
      if (!NonEmptyName(c->name, "child name") || !ExpectString(c->value)) return false;
      auto found = module_ids_.find(Str(c->value));
      if (found == module_ids_.end()) return Fail(absl::StrCat("unknown module id ", PyRepr(Str(c->value))));
      module.children.emplace_back(doc_.names.Intern(Str(c->name)), found->second);
    }
  }
  if (auto it = v.FindMember("params"); it != v.MemberEnd()) {
    At at(*this, "params");
    const Value& params = it->value;
    if (!ExpectObject(params) || !CheckUniqueKeys(params)) return false;
    module.params.reserve(params.MemberCount());
    const NameSet children(module.children, [](const auto& c) { return c.first; });
    for (auto p = params.MemberBegin(); p != params.MemberEnd(); ++p) {
      At at_param(*this, Str(p->name));
      if (!NonEmptyName(p->name, "parameter name") || !ExpectString(p->value)) return false;
      auto found = param_ids_.find(Str(p->value));
      if (found == param_ids_.end()) return Fail(absl::StrCat("unknown parameter id ", PyRepr(Str(p->value))));
      NameId name = doc_.names.Intern(Str(p->name));
      if (children.Contains(name)) {
        return Fail(absl::StrCat("name ", PyRepr(Str(p->name)), " is both a child and a parameter"));
      }
      module.params.emplace_back(name, found->second);
    }
  }
  if (auto it = v.FindMember("parallel"); it != v.MemberEnd()) {
    At at(*this, "parallel");
    if (!ParseParallel(it->value, module.parallel)) return false;
  }
  if (auto it = v.FindMember("family"); it != v.MemberEnd()) {
    At at(*this, "family");
    module.family.emplace();
    if (!ParseFamily(it->value, *module.family)) return false;
  }
  return true;
}

// As the reference reads a signature: "**name" is var-keyword, "*name"
// var-positional, anything else a plain parameter; names are not validated.
bool Parser::ParseForward(const Value& v, Module& module) {
  if (!ExpectArray(v)) return false;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    At at(*this, i);
    if (!ExpectString(v[i])) return false;
    std::string_view name = Str(v[i]);
    if (name.substr(0, 2) == "**") {
      name.remove_prefix(2);
      module.var_keyword = true;
    } else if (name.substr(0, 1) == "*") {
      name.remove_prefix(1);
    }
    module.forward.push_back(doc_.names.Intern(name));
  }
  return true;
}

bool Parser::ParseFamily(const Value& v, Family& family) {
  if (!ExpectObject(v) || !CheckKeys(v, {"parallel", "sharding", "cached"})) return false;
  if (auto it = v.FindMember("parallel"); it != v.MemberEnd()) {
    At at(*this, "parallel");
    if (!Expect(it->value, it->value.IsBool(), "a boolean")) return false;
    family.parallel = it->value.GetBool();
  }
  if (auto it = v.FindMember("sharding"); it != v.MemberEnd() && !it->value.IsNull()) {
    At at(*this, "sharding");
    family.sharding.emplace();
    if (!ParseLayout(it->value, /*in_plan=*/false, *family.sharding)) return false;
  }
  if (auto it = v.FindMember("cached"); it != v.MemberEnd() && !it->value.IsNull()) {
    At at(*this, "cached");
    const Value& cached = it->value;
    if (!ExpectObject(cached) || !CheckKeys(cached, {"sharding", "parallel"})) return false;
    family.cached.emplace();
    auto sharding = cached.FindMember("sharding");
    if (sharding == cached.MemberEnd()) return Fail("missing required key 'sharding'");
    {
      At at_sharding(*this, "sharding");
      if (!ParseLayout(sharding->value, /*in_plan=*/false, family.cached->sharding)) return false;
    }
    if (auto p = cached.FindMember("parallel"); p != cached.MemberEnd()) {
      At at_parallel(*this, "parallel");
      if (!ParseParallel(p->value, family.cached->parallel)) return false;
    }
  }
  return true;
}

bool Parser::ParseParallel(const Value& v, std::optional<ParallelSpec>& out) {
  if (v.IsNull()) return true;
  if (!ExpectObject(v) || !CheckKeys(v, {"binding_kind", "axes"})) return false;
  ParallelSpec spec;
  spec.pointer = pointer_;
  auto kind = v.FindMember("binding_kind");
  if (kind == v.MemberEnd()) return Fail("missing required key 'binding_kind'");
  {
    At at(*this, "binding_kind");
    if (!ExpectString(kind->value)) return false;
    if (kind->value.GetStringLength() == 0) return Fail("binding_kind must not be empty");
    spec.binding_kind = doc_.names.Intern(Str(kind->value));
  }
  if (auto axes = v.FindMember("axes"); axes != v.MemberEnd()) {
    At at(*this, "axes");
    if (!ExpectArray(axes->value)) return false;
    for (rapidjson::SizeType i = 0; i < axes->value.Size(); ++i) {
      At at_axis(*this, i);
      if (!ExpectString(axes->value[i])) return false;
      spec.axes.push_back(doc_.names.Intern(Str(axes->value[i])));
    }
  }
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
    out.push_back({doc_.names.Intern(Str(m->name)), *placement});
  }
  return true;
}

bool Parser::ParsePlacementMap(const Value& v, PlacementMap& out) {
  if (!ExpectObject(v) || !CheckUniqueKeys(v)) return false;
  out.reserve(v.MemberCount());
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    PlacementEntry entry{doc_.names.Intern(Str(m->name)), {}};
    if (!ParseNamedPlacements(m->value, entry.placements)) return false;
    out.push_back(std::move(entry));
  }
  return true;
}

bool Parser::ParseLayout(const Value& v, bool in_plan, Layout& out) {
  if (!ExpectObject(v) || !CheckKeys(v, {"params", "in_src", "in_dst", "out_src", "out_dst", "out_names",
                                         "local_compute_fn", "inner_wrapper", "inner_target",
                                         "region_dispatch"})) {
    return false;
  }
  out.pointer = pointer_;
  const std::pair<std::string_view, std::optional<PlacementMap>*> maps[] = {
      {"params", &out.params}, {"in_src", &out.in_src},   {"in_dst", &out.in_dst},
      {"out_src", &out.out_src}, {"out_dst", &out.out_dst},
  };
  for (const auto& [key, field] : maps) {
    auto it = v.FindMember(rapidjson::StringRef(key.data(), key.size()));
    if (it == v.MemberEnd() || it->value.IsNull()) {
      if (in_plan && key == "params") {
        At at(*this, key);
        return Fail("a plan layout must give params as an object");
      }
      continue;
    }
    At at(*this, key);
    field->emplace();
    if (!ParsePlacementMap(it->value, **field)) return false;
  }
  if (auto it = v.FindMember("out_names"); it != v.MemberEnd() && !it->value.IsNull()) {
    At at(*this, "out_names");
    if (!ExpectArray(it->value)) return false;
    out.out_names.emplace();
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      At at_name(*this, i);
      if (!ExpectString(it->value[i])) return false;
      out.out_names->push_back(doc_.names.Intern(Str(it->value[i])));
    }
  }
  for (std::string_view legacy : kLegacyFields) {
    auto it = v.FindMember(rapidjson::StringRef(legacy.data(), legacy.size()));
    if (it == v.MemberEnd()) continue;
    At at(*this, legacy);
    if (!CheckUniqueKeysDeep(it->value)) return false;
    if (!it->value.IsNull() && out.legacy_field == kNoName) out.legacy_field = doc_.names.Intern(legacy);
  }
  return true;
}

bool Parser::ParseFqnLayouts(const Value& v, bool in_plan, std::vector<FqnLayout>& out) {
  if (!ExpectObject(v) || !CheckUniqueKeys(v)) return false;
  out.reserve(v.MemberCount());
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    FqnLayout entry{doc_.names.Intern(Str(m->name)), {}};
    if (!ParseLayout(m->value, in_plan, entry.layout)) return false;
    out.push_back(std::move(entry));
  }
  return true;
}

bool Parser::ParseProviders(const Value& v) {
  if (!ExpectObject(v) || !CheckKeys(v, {"sharding", "native"})) return false;
  if (auto it = v.FindMember("sharding"); it != v.MemberEnd()) {
    At at(*this, "sharding");
    if (!ParseFqnLayouts(it->value, /*in_plan=*/false, doc_.model_providers)) return false;
  }
  if (auto it = v.FindMember("native"); it != v.MemberEnd()) {
    At at(*this, "native");
    if (!ExpectArray(it->value)) return false;
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      At at_request(*this, i);
      const Value& r = it->value[i];
      if (!ExpectObject(r) || !CheckKeys(r, {"match", "sharding", "parallel"})) return false;
      NativeRequest request;
      request.pointer = pointer_;
      auto match = r.FindMember("match");
      if (match == r.MemberEnd()) return Fail("missing required key 'match'");
      {
        At at_match(*this, "match");
        if (!ExpectArray(match->value)) return false;
        for (rapidjson::SizeType k = 0; k < match->value.Size(); ++k) {
          At at_pattern(*this, k);
          if (!ExpectString(match->value[k])) return false;
          request.match.push_back(doc_.names.Intern(Str(match->value[k])));
        }
      }
      auto sharding = r.FindMember("sharding");
      if (sharding == r.MemberEnd()) return Fail("missing required key 'sharding'");
      {
        At at_sharding(*this, "sharding");
        if (!ParseLayout(sharding->value, /*in_plan=*/false, request.sharding)) return false;
      }
      if (auto p = r.FindMember("parallel"); p != r.MemberEnd()) {
        At at_parallel(*this, "parallel");
        if (!ParseParallel(p->value, request.parallel)) return false;
      }
      doc_.native.push_back(std::move(request));
    }
  }
  return true;
}

bool Parser::ParsePlan(const Value& v) {
  if (!ExpectObject(v) || !CheckKeys(v, {"modules"})) return false;
  auto modules = v.FindMember("modules");
  if (modules == v.MemberEnd()) return Fail("missing required key 'modules'");
  At at(*this, "modules");
  doc_.plan.emplace();
  return ParseFqnLayouts(modules->value, /*in_plan=*/true, *doc_.plan);
}

// Refuses cycles anywhere in `children`, and trees whose expansion from the
// root exceeds the path limits. Both are computed over the DAG, never by
// expanding it.
bool Parser::CheckTree() {
  const size_t n = doc_.modules.size();
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(n, kNew);
  std::vector<ModuleId> order;  // post-order: children before parents
  order.reserve(n);
  std::vector<std::pair<ModuleId, size_t>> stack;
  for (ModuleId start = 0; start < n; ++start) {
    if (state[start] != kNew) continue;
    stack.push_back({start, 0});
    state[start] = kOpen;
    while (!stack.empty()) {
      auto& [m, next] = stack.back();
      const auto& children = doc_.modules[m].children;
      if (next < children.size()) {
        const auto& [name, child] = children[next++];
        if (state[child] == kOpen) {
          At at_module(*this, doc_.Name(doc_.modules[m].id));
          At at_children(*this, "children");
          At at_child(*this, doc_.Name(name));
          return Fail(absl::StrCat("cycle in children: module ", PyRepr(doc_.Name(doc_.modules[child].id)),
                                   " contains itself"));
        }
        if (state[child] == kNew) {
          state[child] = kOpen;
          stack.push_back({child, 0});
        }
      } else {
        state[m] = kDone;
        order.push_back(m);
        stack.pop_back();
      }
    }
  }
  // paths(m): paths in m's subtree, m included; bytes(m): their total local
  // FQN length relative to m. Saturating at the limits.
  const uint64_t cap = UINT64_MAX / 4;
  std::vector<uint64_t> paths(n, 1), bytes(n, 0);
  for (ModuleId m : order) {
    uint64_t p = 1, b = 0;
    for (const auto& [name, child] : doc_.modules[m].children) {
      const uint64_t name_len = doc_.Name(name).size();
      p = std::min(cap, p + paths[child]);
      b = std::min(cap, b + bytes[child] + std::min(cap, paths[child] * (name_len + 1)));
    }
    paths[m] = p;
    bytes[m] = b;
  }
  if (paths[doc_.root] > limits_.max_paths) {
    return Fail(absl::StrCat("the module tree expands to more than ", limits_.max_paths,
                             " module paths (shared submodules multiply paths); raise the path limit if "
                             "this is intended"));
  }
  if (bytes[doc_.root] > limits_.max_fqn_bytes) {
    return Fail(absl::StrCat("the module paths' names total more than ", limits_.max_fqn_bytes,
                             " bytes; raise the limit if this is intended"));
  }
  return true;
}

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

std::string JsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

ParsedDocument ParseDocument(std::string_view json, const Limits& limits) {
  ParsedDocument result;
  auto invalid = [&](std::string message, std::string pointer) {
    Diagnostic d;
    d.code = "invalid-document";
    d.severity = Severity::kError;
    d.message = std::move(message);
    d.pointer = std::move(pointer);
    result.error = std::move(d);
    return std::move(result);
  };

  rapidjson::Document dom;
  rapidjson::MemoryStream stream(json.data(), json.size());
  rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>> reader;
  bool too_deep = false;
  auto generate = [&](rapidjson::Document& handler) {
    DepthLimitedHandler<rapidjson::Document> limited(handler, limits.max_json_depth);
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> input(stream);
    bool ok = !reader.Parse<kParseFlags>(input, limited).IsError();
    too_deep = limited.too_deep();
    return ok;
  };
  dom.Populate(generate);
  if (reader.HasParseError()) {
    const size_t offset = reader.GetErrorOffset();
    if (too_deep) {
      return invalid(absl::StrCat("the document nests arrays and objects deeper than ", limits.max_json_depth,
                                  " levels (at ", LineColumn(json, offset), ")"),
                     "");
    }
    return invalid(absl::StrCat("malformed JSON at ", LineColumn(json, offset), ": ",
                                rapidjson::GetParseError_En(reader.GetParseErrorCode())),
                   "");
  }

  auto document = std::make_unique<Document>();
  Parser parser(*document, limits);
  if (!parser.ParseRoot(dom)) {
    const std::string& pointer = parser.error_pointer();
    return invalid(absl::StrCat(parser.error(), " (at ", pointer.empty() ? "the document root" : pointer, ")"),
                   pointer);
  }
  result.document = std::move(document);
  return result;
}

}  // namespace shardplan

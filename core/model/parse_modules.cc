// Parsing a shardplan.v1 document's parameters and modules (spec section
// 2): a member of the parameters or modules map at a time, as the reader
// streams them; a module's forward signature, children, params, parallel
// spec and family.
#include <array>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/model/parser.h"
#include "core/text/pyrepr.h"

namespace shardplan::parse_internal {

bool Parser::ParameterItem(std::string_view id, const Value& v) {
  At at(*this, id);
  {
    Parameter param;
    param.id = Listed(id);
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
        return Fail(UnknownDtypeMessage(Str(*dtype)));
      }
      param.dtype = *found;
    }
    if (param.shape) {
      const std::optional<uint64_t> bytes = TensorBytes(*param.shape, param.dtype);
      if (!bytes) {
        At at_shape(*this, "shape");
        return Fail(ParameterTooLargeMessage(id, param.dtype));
      }
      if (*bytes > kMaxParameterBytes - parameter_bytes_) return Fail(ParametersTooLarge());
      parameter_bytes_ += *bytes;
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
  module.id = Listed(id);
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
      module.children.emplace_back(Common(Str(c->name)), Listed(Str(c->value)));
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
      module.params.emplace_back(name, Listed(Str(p->value)));
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

}  // namespace shardplan::parse_internal

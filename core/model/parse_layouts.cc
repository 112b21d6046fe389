// Parsing a shardplan.v1 document's layouts and what holds them (spec
// section 2, planner-v1 section 1): parallel specs, placement maps, layouts,
// the members of providers.sharding and plan.modules as the reader streams
// them, native requests, the plan, templates and overrides.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/fixes.h"
#include "core/model/parser.h"
#include "core/model/placement.h"
#include "core/model/style.h"
#include "core/text/pyrepr.h"
#include "core/text/suggest.h"

namespace shardplan::parse_internal {
namespace {

// An unknown style's fix-it: the nearest style, put in its place.
std::shared_ptr<const FixIt> StyleFixIt(std::string_view name, std::string_view pointer) {
  NearestName near(name);
  for (size_t s = 0; s < kStyleCount; ++s) near.Consider(StyleName(static_cast<Style>(s)));
  if (!near.best()) return nullptr;
  return MakeFixIt(DidYouMean(*near.best()), {ReplaceWithString(pointer, *near.best())});
}

}  // namespace

bool Parser::ParseParallel(const Value& v, Origin origin, std::optional<ParallelSpec>& out) {
  if (v.IsNull()) return true;
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
        // At the null value, or at the layout when there is no params to
        // point at (a pointer names what is in the document).
        if (f[k] == nullptr) return Fail("a plan layout must give params as an object");
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
  FqnLayout entry{Listed(fqn), {}};
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
        return Fail(UnknownStyleMessage(Str(m->value)), StyleFixIt(Str(m->value), Pointer()));
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

// {"prefix": P, "modules": {MODULE: [[inputs], [outputs]]}}: Hugging Face's
// base_model_pp_plan, its (inputs, outputs) tuples as arrays.
bool Parser::ParsePipeline(const Value& v) {
  enum { kPrefix, kModules };
  static constexpr std::array<std::string_view, 2> kKeys = {"prefix", "modules"};
  Fields<2> f;
  if (!ReadFields(v, kKeys, f) || !Required(f[kModules], "modules")) return false;
  PipelinePlan& pipeline = doc_.pipeline.emplace();
  if (f[kPrefix]) {
    At at(*this, "prefix");
    if (!ExpectString(*f[kPrefix])) return false;
    pipeline.prefix = std::string(Str(*f[kPrefix]));
  }
  At at(*this, "modules");
  const Value& modules = *f[kModules];
  if (!ExpectObject(modules) || !CheckUniqueKeys(modules)) return false;
  for (auto m = modules.MemberBegin(); m != modules.MemberEnd(); ++m) {
    At at_module(*this, Str(m->name));
    if (Str(m->name).empty()) return Fail("a pipeline module must not be empty");
    PipelineStage& stage = pipeline.stages.emplace_back();
    stage.module = std::string(Str(m->name));
    stage.pointer = Pointer();
    if (!m->value.IsArray() || m->value.Size() != 2) {
      return Fail("a pipeline module's entry must be [inputs, outputs], two arrays of names");
    }
    {
      At at_inputs(*this, size_t{0});
      if (!ParseNames(m->value[0], stage.inputs)) return false;
    }
    At at_outputs(*this, size_t{1});
    if (!ParseNames(m->value[1], stage.outputs)) return false;
  }
  return true;
}

bool Parser::ParseNames(const Value& v, std::vector<std::string>& out) {
  if (!ExpectArray(v)) return false;
  for (size_t i = 0; i < v.Size(); ++i) {
    At at(*this, i);
    if (!ExpectString(v[i])) return false;
    out.emplace_back(Str(v[i]));
  }
  return true;
}

}  // namespace shardplan::parse_internal

#include "core/model/document.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "core/text/bytes.h"
#include "core/text/json_pointer.h"

namespace shardplan {
namespace {

constexpr std::pair<std::string_view, Dtype> kDtypes[] = {
    {"float32", Dtype::kFloat32},          {"float16", Dtype::kFloat16},
    {"bfloat16", Dtype::kBfloat16},        {"float8_e4m3fn", Dtype::kFloat8E4m3fn},
    {"float8_e5m2", Dtype::kFloat8E5m2},   {"int8", Dtype::kInt8},
    {"int32", Dtype::kInt32},              {"int64", Dtype::kInt64},
    {"bool", Dtype::kBool},
};

}  // namespace

std::optional<Dtype> ParseDtype(std::string_view name) {
  for (const auto& [spelling, dtype] : kDtypes) {
    if (SameText(spelling, name)) return dtype;
  }
  return std::nullopt;
}

std::string_view DtypeName(Dtype dtype) {
  for (const auto& [spelling, d] : kDtypes) {
    if (d == dtype) return spelling;
  }
  return "float32";
}

uint64_t DtypeBytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFloat32:
    case Dtype::kInt32:
      return 4;
    case Dtype::kFloat16:
    case Dtype::kBfloat16:
      return 2;
    case Dtype::kFloat8E4m3fn:
    case Dtype::kFloat8E5m2:
    case Dtype::kInt8:
    case Dtype::kBool:
      return 1;
    case Dtype::kInt64:
      return 8;
  }
  return 4;
}

std::optional<uint64_t> TensorBytes(absl::Span<const int64_t> shape, Dtype dtype) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  uint64_t bytes = DtypeBytes(dtype);
  for (int64_t dim : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes) || bytes > kMaxParameterBytes) {
      return std::nullopt;
    }
  }
  return bytes;
}

std::string Document::PointerOf(const Origin& origin) const {
  auto module = [&](std::string_view rest) {
    return absl::StrCat("/modules/", JsonPointerToken(Name(modules[origin.index].id)), rest);
  };
  switch (origin.kind) {
    case Origin::Kind::kProvider:
      return absl::StrCat("/providers/sharding/", JsonPointerToken(Name(model_providers[origin.index].fqn)));
    case Origin::Kind::kPlan:
      return absl::StrCat("/plan/modules/", JsonPointerToken(Name((*plan)[origin.index].fqn)));
    case Origin::Kind::kOverride:
      return absl::StrCat("/overrides/", JsonPointerToken(Name(overrides[origin.index].fqn)));
    case Origin::Kind::kNativeSharding:
      return absl::StrCat("/providers/native/", origin.index, "/sharding");
    case Origin::Kind::kNativeParallel:
      return absl::StrCat("/providers/native/", origin.index, "/parallel");
    case Origin::Kind::kFamily:
      return module("/family/sharding");
    case Origin::Kind::kCachedSharding:
      return module("/family/cached/sharding");
    case Origin::Kind::kCachedParallel:
      return module("/family/cached/parallel");
    case Origin::Kind::kModuleParallel:
      return module("/parallel");
    case Origin::Kind::kTemplateRule:
      return templates[origin.index].rules[origin.rule].pointer;
  }
  return "";
}

std::optional<std::string> Document::ParamPointerOf(const Origin& origin, std::string_view param) const {
  if (origin.kind == Origin::Kind::kTemplateRule) return std::nullopt;
  return DeclarationPointerOf(origin, param);
}

std::string Document::DeclarationPointerOf(const Origin& origin, std::string_view param) const {
  std::string pointer = PointerOf(origin);
  if (origin.kind != Origin::Kind::kTemplateRule) absl::StrAppend(&pointer, "/params/", JsonPointerToken(param));
  return pointer;
}

size_t MapStore::HashOf(const PlacementMap& map) {
  uint64_t h = map.size();
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x9e3779b97f4a7c15ull; };
  for (const PlacementEntry& e : map) {
    mix(e.name);
    for (const AxisPlacement& a : e.placements) {
      const Placement& p = a.placement;
      // What operator== compares: the dim of a shard, the op of a partial.
      const uint64_t detail = p.kind == Placement::Kind::kShard     ? static_cast<uint32_t>(p.dim)
                              : p.kind == Placement::Kind::kPartial ? static_cast<uint64_t>(p.op)
                                                                    : 0;
      mix((uint64_t{a.axis} << 32) ^ (static_cast<uint64_t>(p.kind) << 40) ^ detail);
    }
  }
  return absl::HashOf(h);
}

bool MapStore::Same(const PlacementMap& a, const PlacementMap& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const NamedPlacements& x = a[i].placements;
    const NamedPlacements& y = b[i].placements;
    if (a[i].name != b[i].name || x.size() != y.size()) return false;
    for (size_t k = 0; k < x.size(); ++k) {
      if (x[k].axis != y[k].axis || x[k].placement != y[k].placement) return false;
    }
  }
  return true;
}

MapRef MapStore::Intern(PlacementMap map) { return MapRef(Stored(std::move(map), maps_, index_)); }

size_t MapStore::HashOf(const LayoutBody& body) {
  const SmallVector<NameId>* names = body.out_names.get();
  return absl::HashOf(body.params.get(), body.in_src.get(), body.in_dst.get(), body.out_src.get(), body.out_dst.get(),
                      body.legacy_field, names != nullptr, names != nullptr ? absl::MakeConstSpan(*names)
                                                                            : absl::Span<const NameId>());
}

bool MapStore::Same(const LayoutBody& a, const LayoutBody& b) {
  return a.params.get() == b.params.get() && a.in_src.get() == b.in_src.get() && a.in_dst.get() == b.in_dst.get() &&
         a.out_src.get() == b.out_src.get() && a.out_dst.get() == b.out_dst.get() &&
         a.legacy_field == b.legacy_field && a.out_names == b.out_names;
}

const LayoutBody* MapStore::Intern(LayoutBody body) { return Stored(std::move(body), bodies_, body_index_); }

std::unique_ptr<Document> Document::Clone() const {
  auto copy = std::make_unique<Document>();
  copy->names = names.Clone();
  copy->maps = std::make_shared<MapStore>(maps);
  copy->mesh = mesh;
  copy->mesh_names = mesh_names;
  copy->parameters = parameters;
  copy->modules.reserve(modules.size());
  for (const Module& m : modules) {
    Module& c = copy->modules.emplace_back();
    c.id = m.id;
    c.type = m.type;
    c.forward = m.forward;
    c.var_keyword = m.var_keyword;
    c.first_input = m.first_input;
    c.children = m.children;
    c.params = m.params;
    c.parallel = m.parallel;
    if (m.family) c.family = std::make_unique<Family>(*m.family);
  }
  copy->family_modules = family_modules;
  copy->root = root;
  copy->tree_paths = tree_paths;
  copy->tree_fqn_bytes = tree_fqn_bytes;
  copy->model_providers = model_providers;
  copy->native = native;
  copy->plan = plan;
  copy->templates = templates;
  copy->overrides = overrides;
  copy->pipeline = pipeline;
  copy->training = training;
  return copy;
}

}  // namespace shardplan

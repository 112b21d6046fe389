#include "core/document.h"

#include "absl/strings/str_cat.h"
#include "core/parse.h"

namespace shardplan {

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

std::unique_ptr<Document> Document::Clone() const {
  auto copy = std::make_unique<Document>();
  copy->names = names.Clone();
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
  copy->root = root;
  copy->model_providers = model_providers;
  copy->native = native;
  copy->plan = plan;
  copy->templates = templates;
  copy->overrides = overrides;
  return copy;
}

}  // namespace shardplan

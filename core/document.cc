#include "core/document.h"

namespace shardplan {

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

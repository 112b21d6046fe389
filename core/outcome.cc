#include "core/outcome.h"

namespace shardplan {

std::vector<ModuleTree::ParamPath> OwnedSlots(const Outcome& outcome) {
  std::vector<ModuleTree::ParamPath> slots;
  if (!outcome.owned) return slots;
  const ModuleTree& tree = *outcome.tree;
  for (PathId q = 0; q < tree.size(); ++q) {
    for (const auto& [name, p] : tree.params(q)) {
      if (outcome.owned->owned[p]) slots.push_back({q, name});
    }
  }
  return slots;
}

}  // namespace shardplan

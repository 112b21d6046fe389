#include "core/owners.h"

namespace shardplan {

void Owners::Add(Owner owner) {
  index_[owner.module] = static_cast<uint32_t>(entries_.size());
  entries_.push_back(std::move(owner));
  removed_.push_back(false);
}

void Owners::Remove(ModuleId m) {
  if (index_[m] == kNone) return;
  removed_[index_[m]] = true;
  index_[m] = kNone;
}

std::vector<Owner*> Owners::InOrder() {
  std::vector<Owner*> out;
  out.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!removed_[i]) out.push_back(&entries_[i]);
  }
  return out;
}

std::vector<const Owner*> Owners::InOrder() const {
  std::vector<const Owner*> out;
  out.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!removed_[i]) out.push_back(&entries_[i]);
  }
  return out;
}

}  // namespace shardplan

#include "core/owners.h"

#include <algorithm>

#include "core/parallel.h"

namespace shardplan {

Owners::Owners(size_t module_count) : index_(module_count, kNone) {
  entries_.reserve(module_count);
  TouchPages(entries_.data(), module_count * sizeof(Owner));
  removed_.reserve(module_count);
}

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

std::vector<Owner> Owners::Take() {
  size_t kept = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (removed_[i]) continue;
    if (kept != i) entries_[kept] = std::move(entries_[i]);
    ++kept;
  }
  entries_.resize(kept);
  std::vector<Owner> out = std::move(entries_);
  entries_.clear();
  removed_.clear();
  std::fill(index_.begin(), index_.end(), kNone);
  return out;
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

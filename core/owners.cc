#include "core/owners.h"

#include <algorithm>

#include "core/name_set.h"

namespace shardplan {

std::optional<SmallVector<NameId>> NormalizedOutNames(const Layout& layout) {
  if (layout.out_names) return layout.out_names;
  std::optional<SmallVector<NameId>> names;
  NameSet seen;
  for (const auto* map : {&layout.out_src, &layout.out_dst}) {
    if (!*map || (*map)->empty()) continue;
    if (!names) names.emplace();
    for (const PlacementEntry& e : **map) {
      if (seen.Insert(e.name)) names->push_back(e.name);
    }
  }
  return names;
}

Owners::Owners(size_t module_count) : index_(module_count, kNone) {
  entries_.reserve(module_count);
  TouchPages(entries_.data(), module_count * sizeof(Owner));
  removed_.reserve(module_count);
}

void Owners::Remove(ModuleId m) {
  if (index_[m] == kNone) return;
  removed_[index_[m]] = true;
  ++removed_count_;
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
  removed_count_ = 0;
  std::fill(index_.begin(), index_.end(), kNone);
  return out;
}

namespace {

// Pointers to the entries not removed, in order (const or not).
template <typename Entry>
std::vector<Entry*> Live(Entry* entries, size_t count, const std::vector<bool>& removed, size_t removed_count) {
  std::vector<Entry*> out(count - removed_count);
  size_t k = 0;
  for (size_t i = 0; i < count; ++i) {
    if (removed_count == 0 || !removed[i]) out[k++] = entries + i;
  }
  return out;
}

}  // namespace

std::vector<Owner*> Owners::InOrder() { return Live(entries_.data(), entries_.size(), removed_, removed_count_); }

std::vector<const Owner*> Owners::InOrder() const {
  return Live(entries_.data(), entries_.size(), removed_, removed_count_);
}

}  // namespace shardplan

#include "core/ownership/owners.h"

#include <algorithm>
#include <functional>

#include "core/model/name_set.h"

namespace shardplan {

std::optional<SmallVector<NameId>> NormalizedOutNames(const Layout& layout) {
  if (layout.out_names()) return *layout.out_names();
  std::optional<SmallVector<NameId>> names;
  NameSet seen;
  for (const auto* map : {&layout.out_src(), &layout.out_dst()}) {
    if (!*map || (*map)->empty()) continue;
    if (!names) names.emplace();
    for (const PlacementEntry& e : **map) {
      if (seen.Insert(e.name)) names->push_back(e.name);
    }
  }
  return names;
}

OwnerKind KindOf(const Owner& owner, const ModuleTree& tree) {
  const Document& doc = tree.doc();
  const std::less_equal<const Layout*> at_most;
  if (!doc.native.empty() && at_most(&doc.native.front().sharding, owner.layout) &&
      at_most(owner.layout, &doc.native.back().sharding)) {
    return OwnerKind::kNative;
  }
  const Family* family = doc.modules[tree.module(owner.path)].family.get();
  if (family != nullptr && ((family->sharding && owner.layout == &*family->sharding) ||
                            (family->cached && owner.layout == &family->cached->sharding))) {
    return OwnerKind::kFamily;
  }
  return OwnerKind::kModel;
}

void Owners::Remove(ModuleId m) {
  if (index_[m] == kNone) return;
  removed_[index_[m]] = true;
  ++removed_count_;
  index_[m] = kNone;
}

void Owners::Compact() {
  if (removed_count_ == 0) return;
  std::vector<uint32_t> moved_to(entries_.size(), kNone);
  uint32_t kept = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (removed_[i]) continue;
    entries_[kept] = entries_[i];
    moved_to[i] = kept++;
  }
  entries_.resize(kept);
  for (uint32_t& index : index_) {
    if (index != kNone) index = moved_to[index];
  }
  removed_.assign(kept, false);
  removed_count_ = 0;
}

std::vector<Owner> Owners::Take() {
  Compact();
  std::vector<Owner> out = std::move(entries_);
  entries_.clear();
  removed_.clear();
  std::fill(index_.begin(), index_.end(), kNone);
  return out;
}

}  // namespace shardplan

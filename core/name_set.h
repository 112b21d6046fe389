// Membership among interned names: a linear scan of an inline array for the
// handful of names a layout or module usually carries (no allocation), a
// hash set beyond that, so that checks stay linear in hostile documents with
// huge port or child maps.
#ifndef SHARDPLAN_CORE_NAME_SET_H_
#define SHARDPLAN_CORE_NAME_SET_H_

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "core/interner.h"

namespace shardplan {

class NameSet {
 public:
  // Up to this many names are scanned; more are hashed.
  static constexpr size_t kSmall = 16;

  NameSet() = default;
  template <typename Range, typename Name>
  NameSet(const Range& items, Name name) {
    for (const auto& item : items) Insert(name(item));
  }

  // Returns false if `n` was already present.
  bool Insert(NameId n) {
    if (!hashed_.empty()) return hashed_.insert(n).second;
    if (std::find(small_.begin(), small_.end(), n) != small_.end()) return false;
    small_.push_back(n);
    if (small_.size() > kSmall) {
      hashed_.insert(small_.begin(), small_.end());
      small_.clear();
    }
    return true;
  }
  bool Contains(NameId n) const {
    return hashed_.empty() ? std::find(small_.begin(), small_.end(), n) != small_.end() : hashed_.contains(n);
  }
  size_t size() const { return hashed_.empty() ? small_.size() : hashed_.size(); }

 private:
  absl::InlinedVector<NameId, kSmall> small_;  // no allocation while small
  absl::flat_hash_set<NameId> hashed_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_NAME_SET_H_

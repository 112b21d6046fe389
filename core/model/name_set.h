// Membership among interned names. NameSet: a linear scan of an inline
// array for the handful of names a layout or module usually carries (no
// allocation), a hash set beyond that, so that checks stay linear in hostile
// documents with huge port or child maps. NameBits: one bit per name of the
// document, for sets of up to millions of names.
#ifndef SHARDPLAN_CORE_MODEL_NAME_SET_H_
#define SHARDPLAN_CORE_MODEL_NAME_SET_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/model/interner.h"

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

// Whether two lists of names are the same, compared inline: == on spans
// and vectors of integers calls memcmp, which costs more than comparing the
// one or two names (forward names, mesh axes) an owner's checks compare.
inline bool SameNames(absl::Span<const NameId> a, absl::Span<const NameId> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// A set of interned names as one bit per NameId: for the maps of up to
// millions of FQNs (providers, the plan), whose keys are checked for
// duplicates one by one. Names are numbered densely, so the bits take an
// eighth of a byte per name in the document and grow without rehashing.
class NameBits {
 public:
  // Returns false if `n` was already present.
  bool Insert(NameId n) {
    const size_t word = n / 64;
    if (word >= words_.size()) words_.resize(std::max(word + 1, words_.size() + words_.size() / 2));
    const uint64_t bit = uint64_t{1} << (n % 64);
    const bool fresh = (words_[word] & bit) == 0;
    words_[word] |= bit;
    return fresh;
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_NAME_SET_H_

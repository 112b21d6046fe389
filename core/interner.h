// Interned strings: every name in a document (ids, child and parameter names,
// axis and port names) becomes a dense NameId, so that the hot path compares
// and hashes integers.
#ifndef SHARDPLAN_CORE_INTERNER_H_
#define SHARDPLAN_CORE_INTERNER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace shardplan {

using NameId = uint32_t;
inline constexpr NameId kNoName = UINT32_MAX;

class Interner {
 public:
  Interner() = default;
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;
  Interner(Interner&&) = default;
  Interner& operator=(Interner&&) = default;

  // Makes room for `count` names without rehashing.
  void Reserve(size_t count) {
    ids_.reserve(count);
    views_.reserve(count);
  }
  NameId Intern(std::string_view text);
  // A copy with the same ids for the same names.
  Interner Clone() const;
  // The id of `text` if it was interned, else kNoName.
  NameId Find(std::string_view text) const;
  std::string_view View(NameId id) const { return views_[id]; }

 private:
  // Copies `text` into the arena: blocks never move, so views stay valid.
  std::string_view Store(std::string_view text);

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_left_ = 0;
  char* block_next_ = nullptr;
  std::vector<std::string_view> views_;
  absl::flat_hash_map<std::string_view, NameId> ids_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_INTERNER_H_

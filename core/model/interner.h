// Interned strings: every name in a document (ids, child and parameter names,
// axis and port names) becomes a dense NameId, so that the hot path compares
// and hashes integers.
//
//   Interner names;
//   NameId tp = names.Intern("tp");   // 0: ids count up in first-seen order
//   names.Intern("tp") == tp;         // the same name, the same id
//   names.View(tp) == "tp";           // valid as long as the interner
//   names.Find("dp") == kNoName;      // Find never interns
#ifndef SHARDPLAN_CORE_MODEL_INTERNER_H_
#define SHARDPLAN_CORE_MODEL_INTERNER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace shardplan {

using NameId = uint32_t;
inline constexpr NameId kNoName = UINT32_MAX;

// The names' bytes are copied once into an append-only arena of blocks that
// never move, so that views of them stay valid as the interner grows. An
// absl::flat_hash_set of ids, hashed and compared by the names they stand
// for (absl::Hash of the text), finds a name: 4 bytes a slot, where a map
// keyed by the names' views takes 24, so that more of a large document's
// table stays in cache.
class Interner {
 public:
  Interner() = default;
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;
  Interner(Interner&&) = default;
  Interner& operator=(Interner&&) = default;

  // Makes room for `count` names without rehashing.
  void Reserve(size_t count);
  NameId Intern(std::string_view text);
  // A copy with the same ids for the same names.
  Interner Clone() const;
  // Starts loading the part of the table where `text` is found or would go
  // (abseil's prefetch): lookups of a batch of names, each of which would
  // miss the cache, then wait for their misses together, not one by one.
  void Prefetch(std::string_view text) const { ids_.prefetch(text); }
  // The id of `text` if it was interned, else kNoName.
  NameId Find(std::string_view text) const;
  std::string_view View(NameId id) const { return (*views_)[id]; }
  size_t size() const { return views_->size(); }

 private:
  using Views = std::vector<std::string_view>;  // by id
  // Hash and equality of the names that ids stand for, and of texts looked
  // up. They hold the views, which stay in place when the interner moves.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(NameId id) const { return absl::Hash<std::string_view>()((*views)[id]); }
    size_t operator()(std::string_view text) const { return absl::Hash<std::string_view>()(text); }
    const Views* views;
  };
  struct NameEq {
    using is_transparent = void;
    std::string_view Text(NameId id) const { return (*views)[id]; }
    static std::string_view Text(std::string_view text) { return text; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Text(a) == Text(b);
    }
    const Views* views;
  };

  // Makes room for a name of `bytes` bytes: in the arena's last block, and
  // in the views.
  void MakeRoom(size_t bytes);

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_size_ = 0;  // of the last block, unless a longer name needed more
  size_t block_left_ = 0;
  char* block_next_ = nullptr;
  std::unique_ptr<Views> views_ = std::make_unique<Views>();
  absl::flat_hash_set<NameId, NameHash, NameEq> ids_{0, NameHash{views_.get()}, NameEq{views_.get()}};
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_INTERNER_H_

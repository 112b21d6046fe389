// Interned strings: every name in a document (ids, child and parameter names,
// axis and port names) becomes a dense NameId, so that the hot path compares
// and hashes integers.
//
//   Interner names;
//   NameId tp = names.Intern("tp");   // 0: ids count up in first-seen order
//   names.Intern("tp") == tp;         // the same name, the same id
//   names.View(tp) == "tp";           // valid as long as the interner
//   names.Find("dp") == kNoName;      // Find never interns
//
//   HashedName h = Interner::Hashed("ep");  // hashed once, on any thread,
//   names.Prefetch(h);                      // for both calls
//   names.Intern(h);
#ifndef SHARDPLAN_CORE_MODEL_INTERNER_H_
#define SHARDPLAN_CORE_MODEL_INTERNER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"
#include "core/text/bytes.h"

namespace shardplan {

using NameId = uint32_t;
inline constexpr NameId kNoName = UINT32_MAX;

// A name and its hash in the interner's table (Interner::Hashed): hashing
// a name once serves both Prefetch and Intern, and can be done on another
// thread than the interning.
struct HashedName {
  std::string_view text;
  size_t hash = 0;
};

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
  // `text` with its hash: absl::Hash, seeded per process, so that no
  // document can be crafted to make every name collide.
  static HashedName Hashed(std::string_view text) { return {text, absl::Hash<std::string_view>()(text)}; }
  NameId Intern(std::string_view text) { return Intern(Hashed(text)); }
  // `name` must be Hashed(name.text).
  NameId Intern(const HashedName& name);
  // A copy with the same ids for the same names.
  Interner Clone() const;
  // Starts loading the parts of the table where `names` are found or would
  // go (abseil's prefetch): lookups of names each of which would miss the
  // cache then wait for their misses together, not one by one. GCC takes a
  // prefetch for a call without effect, and removes a prefetch whose hash
  // it can see through: the hash of a HashedName is opaque to it.
  void Prefetch(absl::Span<const HashedName> names) const;
  // The id of `text` if it was interned, else kNoName.
  NameId Find(std::string_view text) const;
  std::string_view View(NameId id) const { return (*views_)[id]; }
  size_t size() const { return views_->size(); }

 private:
  using Views = std::vector<std::string_view>;  // by id
  // Hash and equality of the names that ids stand for, and of texts looked
  // up, hashed or not. They hold the views, which stay in place when the
  // interner moves.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(NameId id) const { return Hashed((*views)[id]).hash; }
    size_t operator()(std::string_view text) const { return Hashed(text).hash; }
    // Out of line and opaque to GCC: see Prefetch.
    size_t operator()(const HashedName& name) const;
    const Views* views;
  };
  struct NameEq {
    using is_transparent = void;
    std::string_view Text(NameId id) const { return (*views)[id]; }
    static std::string_view Text(std::string_view text) { return text; }
    static std::string_view Text(const HashedName& name) { return name.text; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return SameText(Text(a), Text(b));
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

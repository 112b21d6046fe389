// Interned strings: every name in a document (ids, child and parameter names,
// axis and port names) becomes a dense NameId, so that the hot path compares
// and hashes integers.
#ifndef SHARDPLAN_CORE_MODEL_INTERNER_H_
#define SHARDPLAN_CORE_MODEL_INTERNER_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/text/bytes.h"

namespace shardplan {

using NameId = uint32_t;
inline constexpr NameId kNoName = UINT32_MAX;

// An open-addressing table of 8-byte slots (32 bits of the name's hash and
// its id) over an append-only arena of the names' bytes. Interning is the
// hottest call of parsing, and documents hold millions of distinct names:
// small slots keep the probes in cache, and the stored hash bits mean a
// name's bytes are compared only when they very likely match.
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
  // Starts loading the table slot where `text` is found or would go, so
  // that interning it soon after does not wait on memory.
  void Prefetch(std::string_view text) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Home(Hash(text))]);
  }
  // The id of `text` if it was interned, else kNoName.
  NameId Find(std::string_view text) const;
  std::string_view View(NameId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  struct Slot {
    uint32_t hash;
    NameId id;  // kNoName: empty
  };
  static uint32_t Hash(std::string_view text);
  size_t Home(uint32_t hash) const;
  // The slot holding `text`, or the empty slot where it would go.
  Slot& Probe(std::string_view text, uint32_t hash) const;
  void Rehash(size_t capacity);
  // Copies `text` into the arena: blocks never move, so views stay valid.
  std::string_view Store(std::string_view text);

  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_size_ = 0;  // of the last block, without its oversize
  size_t block_left_ = 0;
  char* block_next_ = nullptr;
  std::vector<std::string_view> views_;
  // At most half full; any size (a hash maps to a slot by multiplication),
  // so that a reservation takes just what it needs. Mutable so that Probe
  // serves Find.
  mutable std::vector<Slot> slots_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_INTERNER_H_

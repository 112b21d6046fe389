#include "core/model/interner.h"

#include <algorithm>
#include <cstring>

#include "core/exec/parallel.h"

namespace shardplan {
namespace {

// The names' bytes go into blocks that double from 64 KiB to 8 MiB.
constexpr size_t kFirstBlock = 64 * 1024;
constexpr size_t kLastBlock = 8 * 1024 * 1024;
constexpr size_t kMinSlots = 16;

using bytes::Load4;
using bytes::Load8;

uint64_t Mix(uint64_t h) {  // MurmurHash3's 64-bit finalizer
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

// Eight bytes at a time; the last (or only) bytes with fixed-size loads that
// may overlap the previous ones, never a call to memcpy.
uint32_t Interner::Hash(std::string_view text) {
  const char* p = text.data();
  const size_t n = text.size();
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  uint64_t tail;
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) h = (h ^ Load8(p + i)) * 0x9e3779b97f4a7c15ull;
    tail = Load8(p + n - 8);
  } else if (n >= 4) {
    tail = (uint64_t{Load4(p)} << 32) | Load4(p + n - 4);
  } else if (n > 0) {
    tail = (uint64_t{static_cast<uint8_t>(p[0])} << 16) | (uint64_t{static_cast<uint8_t>(p[n / 2])} << 8) |
           static_cast<uint8_t>(p[n - 1]);
  } else {
    tail = 0;
  }
  return static_cast<uint32_t>(Mix(h ^ tail));
}

// The first slot to probe for `hash`: the hash scaled to the table size.
size_t Interner::Home(uint32_t hash) const { return static_cast<size_t>((uint64_t{hash} * slots_.size()) >> 32); }

Interner::Slot& Interner::Probe(std::string_view text, uint32_t hash) const {
  const size_t size = slots_.size();
  for (size_t i = Home(hash);; i = i + 1 == size ? 0 : i + 1) {
    Slot& slot = slots_[i];
    if (slot.id == kNoName) return slot;
    if (slot.hash != hash) continue;
    const std::string_view name = views_[slot.id];
    if (SameText(name, text)) return slot;
  }
}

void Interner::Rehash(size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.reserve(capacity);
  slots_.assign(capacity, Slot{0, kNoName});
  for (const Slot& s : old) {
    if (s.id == kNoName) continue;
    size_t i = Home(s.hash);
    while (slots_[i].id != kNoName) i = i + 1 == capacity ? 0 : i + 1;
    slots_[i] = s;
  }
}

void Interner::Reserve(size_t count) {
  views_.reserve(count);
  const size_t capacity = std::max(kMinSlots, 2 * count);
  if (capacity > slots_.size()) Rehash(capacity);
}

std::string_view Interner::Store(std::string_view text) {
  if (text.size() > block_left_) {
    block_size_ = block_size_ == 0 ? kFirstBlock : std::min(kLastBlock, 2 * block_size_);
    const size_t size = std::max(block_size_, text.size());
    std::unique_ptr<char[]> block(new char[size]);  // uninitialized: written before read
    block_next_ = block.get();
    blocks_.push_back(std::move(block));
    block_left_ = size;
  }
  if (!text.empty()) std::memcpy(block_next_, text.data(), text.size());
  std::string_view view(block_next_, text.size());
  block_next_ += text.size();
  block_left_ -= text.size();
  return view;
}

Interner Interner::Clone() const {
  Interner copy;
  copy.Reserve(views_.size());
  for (std::string_view v : views_) copy.Intern(v);
  return copy;
}

NameId Interner::Intern(std::string_view text) {
  if (2 * (views_.size() + 1) > slots_.size()) Rehash(std::max(kMinSlots, 2 * slots_.size()));
  const uint32_t hash = Hash(text);
  Slot& slot = Probe(text, hash);
  if (slot.id != kNoName) return slot.id;
  slot = {hash, static_cast<NameId>(views_.size())};
  views_.push_back(Store(text));
  return slot.id;
}

NameId Interner::Find(std::string_view text) const {
  if (slots_.empty()) return kNoName;
  return Probe(text, Hash(text)).id;
}

}  // namespace shardplan

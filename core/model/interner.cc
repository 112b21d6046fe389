#include "core/model/interner.h"

#include <algorithm>
#include <cstring>

namespace shardplan {
namespace {

// The names' bytes go into blocks that double from 64 KiB to 8 MiB: few
// allocations for a large document, little waste for a small one.
constexpr size_t kFirstBlock = 64 * 1024;
constexpr size_t kLastBlock = 8 * 1024 * 1024;

}  // namespace

void Interner::Reserve(size_t count) {
  views_->reserve(count);
  ids_.reserve(count);
}

void Interner::MakeRoom(size_t bytes) {
  if (bytes > block_left_) {
    block_size_ = block_size_ == 0 ? kFirstBlock : std::min(kLastBlock, 2 * block_size_);
    const size_t size = std::max(block_size_, bytes);
    blocks_.push_back(std::unique_ptr<char[]>(new char[size]));
    block_next_ = blocks_.back().get();
    block_left_ = size;
  }
  if (views_->size() == views_->capacity()) views_->reserve(std::max<size_t>(16, 2 * views_->size()));
}

NameId Interner::Intern(const HashedName& name) {
  const std::string_view text = name.text;
  MakeRoom(text.size());
  // One lookup: a new name is copied into the arena and given the next id
  // in it (abseil's lazy emplace, made for keys that live in an arena).
  // Nothing in it can throw, MakeRoom having made room.
  const auto it = ids_.lazy_emplace(name, [&](const auto& construct) {
    if (!text.empty()) std::memcpy(block_next_, text.data(), text.size());
    views_->emplace_back(block_next_, text.size());
    block_next_ += text.size();
    block_left_ -= text.size();
    construct(static_cast<NameId>(views_->size() - 1));
  });
  return *it;
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#endif
size_t Interner::NameHash::operator()(const HashedName& name) const {
  return name.hash;
}

void Interner::Prefetch(absl::Span<const HashedName> names) const {
  for (const HashedName& name : names) ids_.prefetch(name);
}

NameId Interner::Find(std::string_view text) const {
  const auto it = ids_.find(text);
  return it == ids_.end() ? kNoName : *it;
}

Interner Interner::Clone() const {
  Interner copy;
  copy.Reserve(views_->size());
  for (std::string_view v : *views_) copy.Intern(v);
  return copy;
}

}  // namespace shardplan

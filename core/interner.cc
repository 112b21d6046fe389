#include "core/interner.h"

#include <algorithm>
#include <cstring>

namespace shardplan {
namespace {

constexpr size_t kBlockSize = 64 * 1024;

}  // namespace

std::string_view Interner::Store(std::string_view text) {
  if (text.size() > block_left_) {
    const size_t size = std::max(kBlockSize, text.size());
    blocks_.push_back(std::make_unique<char[]>(size));
    block_next_ = blocks_.back().get();
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
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const std::string_view view = Store(text);
  NameId id = static_cast<NameId>(views_.size());
  views_.push_back(view);
  ids_.emplace(view, id);
  return id;
}

NameId Interner::Find(std::string_view text) const {
  auto it = ids_.find(text);
  return it == ids_.end() ? kNoName : it->second;
}

}  // namespace shardplan

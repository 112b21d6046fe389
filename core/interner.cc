#include "core/interner.h"

namespace shardplan {

NameId Interner::Intern(std::string_view text) {
  auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  storage_.emplace_back(text);
  std::string_view view = storage_.back();
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

#include "tests/support/resolve_pointer.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_split.h"

namespace shardplan {

const rapidjson::Value* ResolvePointer(const rapidjson::Value& root, std::string_view pointer) {
  if (pointer.empty()) return &root;
  if (pointer.front() != '/') return nullptr;
  const rapidjson::Value* value = &root;
  for (std::string_view raw : absl::StrSplit(pointer.substr(1), '/')) {
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token.push_back(raw[i]);
      } else if (i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token.push_back(raw[++i] == '0' ? '~' : '/');
      } else {
        return nullptr;
      }
    }
    if (value->IsObject()) {
      const rapidjson::Value key(rapidjson::StringRef(token.data(), static_cast<rapidjson::SizeType>(token.size())));
      auto member = value->FindMember(key);
      if (member == value->MemberEnd()) return nullptr;
      value = &member->value;
    } else if (value->IsArray()) {
      const bool digits =
          std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
      const bool canonical_index =
          digits && !token.empty() && token.size() <= 9 && (token.size() == 1 || token[0] != '0');
      if (!canonical_index) return nullptr;
      const size_t index = std::stoul(token);
      if (index >= value->Size()) return nullptr;
      value = &(*value)[static_cast<rapidjson::SizeType>(index)];
    } else {
      return nullptr;
    }
  }
  return value;
}

}  // namespace shardplan

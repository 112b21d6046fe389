#include "core/text/json_pointer.h"

namespace shardplan {

std::string JsonPointerToken(std::string_view token) {
  if (token.find_first_of("~/") == std::string_view::npos) return std::string(token);
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace shardplan

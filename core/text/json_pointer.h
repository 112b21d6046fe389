// RFC 6901 JSON pointers, as diagnostics name the declaration at fault.
#ifndef SHARDPLAN_CORE_TEXT_JSON_POINTER_H_
#define SHARDPLAN_CORE_TEXT_JSON_POINTER_H_

#include <string>
#include <string_view>

namespace shardplan {

// One reference token, escaped: "~" -> "~0", "/" -> "~1".
std::string JsonPointerToken(std::string_view token);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_TEXT_JSON_POINTER_H_

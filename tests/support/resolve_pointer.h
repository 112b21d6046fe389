// An RFC 6901 JSON pointer resolver over a RapidJSON document, written from
// the RFC alone: the oracle that diagnostics' pointers name a value of the
// document (tests/golden, fuzz). RapidJSON's own GenericPointer is no
// oracle: it looks members up by C string, so a name holding U+0000 names
// nothing.
#ifndef SHARDPLAN_TESTS_SUPPORT_RESOLVE_POINTER_H_
#define SHARDPLAN_TESTS_SUPPORT_RESOLVE_POINTER_H_

#include <string_view>

#include "rapidjson/document.h"

namespace shardplan {

// The value `pointer` names in `root` ("" is the whole document, "~1" is
// "/", "~0" is "~", array indexes are decimal without leading zeros), or
// null when it names nothing or is malformed.
const rapidjson::Value* ResolvePointer(const rapidjson::Value& root, std::string_view pointer);

}  // namespace shardplan

#endif  // SHARDPLAN_TESTS_SUPPORT_RESOLVE_POINTER_H_

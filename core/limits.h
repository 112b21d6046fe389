// Limits that refuse hostile input while parsing (docs/format.md section 5).
#ifndef SHARDPLAN_CORE_LIMITS_H_
#define SHARDPLAN_CORE_LIMITS_H_

#include <cstdint>

namespace shardplan {

struct Limits {
  // Module paths (named_modules with duplicates) the tree may expand to:
  // shared submodules can make them exponential in the document's size.
  uint64_t max_paths = 10'000'000;
  // Total bytes of all module FQNs (bounds deep chains of long names).
  uint64_t max_fqn_bytes = uint64_t{1} << 30;
  // Nesting of JSON arrays and objects.
  int max_json_depth = 64;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_LIMITS_H_

// Which module paths native requests' glob patterns hit (spec section 4 step
// 4): fnmatch over every FQN, as the reference's named_modules loop does.
#ifndef SHARDPLAN_CORE_OWNERSHIP_NATIVE_MATCH_H_
#define SHARDPLAN_CORE_OWNERSHIP_NATIVE_MATCH_H_

#include <vector>

#include "core/model/module_tree.h"
#include "core/text/glob.h"

namespace shardplan {

// For each pattern, every path whose FQN it matches, in named_modules
// order; none for a literal pattern (the caller resolves it by name).
// Patterns are matched in parallel over chunks of paths.
std::vector<std::vector<PathId>> MatchingPaths(const ModuleTree& tree, const std::vector<Glob>& globs);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_NATIVE_MATCH_H_

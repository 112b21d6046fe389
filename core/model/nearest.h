// Did you mean, for names the module tree resolves: the module path or
// parameter name nearest to one that names nothing, segment by segment.
//
//   NearestModule(tree, 0, "layers.0.mlpp") == "layers.0.mlp"
#ifndef SHARDPLAN_CORE_MODEL_NEAREST_H_
#define SHARDPLAN_CORE_MODEL_NEAREST_H_

#include <optional>
#include <string>
#include <string_view>

#include "core/model/module_tree.h"

namespace shardplan {

// The name, relative to path `from`, of an existing module whose path is
// nearest to `relative` (dot-separated child names): each segment that
// names no child is replaced by the nearest child name (NearestName). nullopt
// when `relative` names a module, or some segment has no child near enough.
std::optional<std::string> NearestModule(const ModuleTree& tree, PathId from, std::string_view relative);

// The same for a parameter named `local` relative to `from` (child names,
// then a parameter slot's name), as named_parameters names it.
std::optional<std::string> NearestParameter(const ModuleTree& tree, PathId from, std::string_view local);

// The glob pattern nearest to `pattern` (a native request's or a template
// rule's, over FQNs from the root) that matches some module, or with
// `params` some module or parameter, read segment by segment: a segment
// with a wildcard stays as it is and matches each child whose name it
// matches; a segment without one is the child's name, or else the nearest
// child name (NearestName) among the children of the modules matched so
// far; with `params`, the last segment may be, or be near, the slot of a
// parameter of those modules. nullopt when no segment changed, when a
// segment has no name near enough, or past 65,536 modules matched at one
// depth.
std::optional<std::string> NearestPattern(const ModuleTree& tree, std::string_view pattern, bool params);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_NEAREST_H_

// One owner's layout (spec section 4 step 5): its ports and its placements.
// Collection checks every owner's, and the final plan's checks (section 6)
// check a plan entry's layout at an owned path the same way. Each function
// reports, in the order it lists, what it finds; a clean layout costs no
// allocation.
#ifndef SHARDPLAN_CORE_OWNERSHIP_OWNER_LAYOUT_H_
#define SHARDPLAN_CORE_OWNERSHIP_OWNER_LAYOUT_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics/sink.h"
#include "core/model/document.h"
#include "core/model/module_tree.h"

namespace shardplan {

// The JSON pointers of the members keyed `name` in `layout`'s maps `ports`
// ("in_src", "in_dst", "out_src", "out_dst"), of those that have one.
std::vector<std::string> KeyPointers(const Document& doc, const Layout& layout,
                                     std::initializer_list<std::string_view> ports, std::string_view name);

// Verifies, for the layout of the module at `path`: - no legacy compute
// injection (legacy-injection); - params, in_src and in_dst present
// (ports-missing); - in_src and in_dst name the same inputs (ports-mismatch);
// - every input is a forward parameter, unless forward takes **kwargs
// (unknown-forward-input); - out_names has no repeat (duplicate-output-name).
void CheckPorts(const ModuleTree& tree, PathId path, const Layout& layout, DiagnosticSink& sink);

// Verifies: - every axis of every named placement (params, in_src, in_dst,
// out_src, out_dst, in that order) is a mesh axis (unknown-axis, once per
// axis); then - no parameter placement is Partial (partial-parameter).
void CheckPlacements(const ModuleTree& tree, PathId path, const Layout& layout, DiagnosticSink& sink);

// Verifies that every communication axis is a mesh axis (parallel-unknown-axis,
// once per axis).
void CheckParallelAxes(const ModuleTree& tree, PathId path, const ParallelSpec& parallel, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_OWNER_LAYOUT_H_

// Nesting of communicating owners (spec section 4 step 5, before the
// per-owner checks).
#ifndef SHARDPLAN_CORE_OWNERSHIP_NESTING_H_
#define SHARDPLAN_CORE_OWNERSHIP_NESTING_H_

#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"

namespace shardplan {

// Verifies that no communicating owner (a parallel spec whose binding_kind
// is not "none") lies inside another of the same binding kind, or inside or
// around one of kind "mesh" (overlapping-communication): one diagnostic per
// (inner, outer) pair, inner owners in entry order and each one's outer
// owners in entry order, as the reference's loops report them. Each owner
// walks its ancestors: linear in the owners' depth, not quadratic.
void CheckNesting(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_NESTING_H_

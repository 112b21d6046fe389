// Section 4 step 5 for every owner: its ports and placements
// (owner_layout.h) and its parallel axes.
#ifndef SHARDPLAN_CORE_OWNERSHIP_OWNER_CHECKS_H_
#define SHARDPLAN_CORE_OWNERSHIP_OWNER_CHECKS_H_

#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"

namespace shardplan {

// CheckPorts, CheckPlacements and, for an owner with a parallel spec that is
// not an applied family's, CheckParallelAxes, owner by owner in entry order.
// Owners are checked in parallel, their diagnostics reported in order.
void CheckOwners(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_OWNER_CHECKS_H_

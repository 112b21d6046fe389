// Checking a final plan against the collected owners (validate_owned_layouts,
// spec section 6).
#ifndef SHARDPLAN_CORE_PLANNING_PLAN_CHECK_H_
#define SHARDPLAN_CORE_PLANNING_PLAN_CHECK_H_

#include <vector>

#include "core/ownership/claims.h"
#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"

namespace shardplan {

// Verifies, for each plan entry in order: - its FQN is a module
// (unknown-module); - no parameter gets two placements across entries
// (override-shared-conflict); and for an owned FQN: - every required
// parameter is still declared (override-removed-ownership); - the ports and
// placements checks of collection; - an applied family layout is unchanged
// (family-layout-changed). Finally: every expected parameter is covered by
// some entry (override-removed-coverage). Runs, as section 6 says, only
// after the ownership checks found no error: the owners' parallel axes,
// which section 6 checks again, are then known to be mesh axes
// (CheckOwners).
void ValidatePlan(const ModuleTree& tree, const Owners& owners, const Claims& claims,
                  const std::vector<FqnLayout>& plan, DiagnosticSink& sink);

// Only the first check, unknown-module, for every entry in order: what a
// plan made without owners gets (section 6 needs an owner; an override of no
// module is still an error, planner-v1 section 3).
void ReportUnknownModules(const ModuleTree& tree, const std::vector<FqnLayout>& plan, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_PLAN_CHECK_H_

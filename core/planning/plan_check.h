// Checking a final plan against the collected owners (validate_owned_layouts,
// spec section 6). The rule for one entry is plan_entry.h's.
#ifndef SHARDPLAN_CORE_PLANNING_PLAN_CHECK_H_
#define SHARDPLAN_CORE_PLANNING_PLAN_CHECK_H_

#include <vector>

#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/claims.h"
#include "core/ownership/owners.h"

namespace shardplan {

// Verifies every entry of `plan` (CheckPlanEntry, then SettlePlanEntry in
// plan order: unknown-module, override-shared-conflict,
// override-removed-ownership, ports, placements, family-layout-changed),
// then that every expected parameter is declared by some entry
// (override-removed-coverage, for the first one that is not). Runs, as
// section 6 says, only after the ownership checks found no error. Entries
// are checked in parallel and settled in order.
void ValidatePlan(const ModuleTree& tree, const Owners& owners, const Claims& claims,
                  const std::vector<FqnLayout>& plan, DiagnosticSink& sink);

// Only unknown-module, for every entry in order: what a plan made without
// owners gets (section 6 needs an owner; an override of no module is still
// an error, planner-v1 section 3).
void ReportUnknownModules(const ModuleTree& tree, const std::vector<FqnLayout>& plan, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_PLAN_CHECK_H_

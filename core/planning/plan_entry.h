// One entry of a final plan (validate_owned_layouts, spec section 6), in two
// parts:
// - CheckPlanEntry needs no other entry: it resolves the entry's FQN and
//   params and, at an owned path, checks that every parameter the owner
//   requires is still declared (override-removed-ownership), the layout's
//   ports and placements as collection does (owner_layout.h), and that an
//   applied family layout is unchanged (family-layout-changed);
// - SettlePlanEntry then, entry after entry in plan order, records the
//   placements each parameter is first given (a later different one is
//   override-shared-conflict), counts the expected parameters covered, and
//   reports in the reference's order: unknown-module, the conflicts, the
//   removed ownership, then what CheckPlanEntry found.
#ifndef SHARDPLAN_CORE_PLANNING_PLAN_ENTRY_H_
#define SHARDPLAN_CORE_PLANNING_PLAN_ENTRY_H_

#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics/sink.h"
#include "core/model/document.h"
#include "core/model/module_tree.h"
#include "core/ownership/claims.h"
#include "core/ownership/owners.h"

namespace shardplan {

// What CheckPlanEntry learns about one entry.
struct PlanEntryCheck {
  PathId path = kNoPath;  // kNoPath: the FQN names no module
  std::optional<std::string> nearest;  // then the nearest module's FQN, if one is near
  // Per entry of the layout's params: the parameter it names (kNoParam:
  // none).
  SmallVector<ParamId> params;
  bool removed_ownership = false;
  DiagnosticSink found;  // ports, placements, family-layout-changed

  // As a fresh PlanEntryCheck, keeping the storage (ScanThenApply).
  void Clear() {
    path = kNoPath;
    nearest.reset();
    params.clear();
    removed_ownership = false;
    found.Clear();
  }
};

// Fills `check` (fresh) for `entry`.
void CheckPlanEntry(const ModuleTree& tree, ModuleTree::Resolver& resolver, const Owners& owners, const Claims& claims,
                    const FqnLayout& entry, PlanEntryCheck& check);

// What the entries settled so far have declared.
struct PlanDeclarations {
  explicit PlanDeclarations(size_t param_count) : first(param_count, nullptr) {}
  // Per parameter: the placements its first declaration gives it (null:
  // none declares it).
  std::vector<const NamedPlacements*> first;
  size_t covered = 0;  // expected parameters that some entry declares
};

void SettlePlanEntry(const Document& doc, const FqnLayout& entry, PlanEntryCheck& check, const Claims& claims,
                     PlanDeclarations& declared, DiagnosticSink& sink);

// unknown-module for an entry whose FQN names no module, with "did you
// mean" the `nearest` module's FQN (NearestModule) when there is one. No
// fix: the nearest module most often has an entry of its own, which a
// rename would replace.
void ReportUnknownModule(const Document& doc, const FqnLayout& entry, const std::optional<std::string>& nearest,
                         DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_PLAN_ENTRY_H_

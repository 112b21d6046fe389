// Building the final plan (planner-v1 section 3): owners first, then the
// generic templates on what no owner covers, then explicit overrides; every
// entry records where it came from.
#ifndef SHARDPLAN_CORE_PLANNING_PLANNER_H_
#define SHARDPLAN_CORE_PLANNING_PLANNER_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/ownership/claims.h"
#include "core/diagnostics/sink.h"
#include "core/model/document.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"
#include "core/planning/shapes.h"

namespace shardplan {

// A parameter placed by a packed style (StylePlacements::packed): two fused
// halves in dim `dim`.
struct PackedParam {
  size_t entry;
  NameId name;
  int32_t dim;
};

struct BuiltPlan {
  std::vector<FqnLayout> entries;  // plan order; template entries point at their first rule
  std::vector<std::vector<std::string>> provenance;  // per entry
  std::vector<PackedParam> packed;
};

// Owners (entry order) enter with their reduced layouts (the parameters
// claims dropped removed, normalized out_names), provenance
// "owned:model|family|native". Each template rule, in document order,
// contributes to each matched module path (named_modules order) and then
// each matched parameter path (named_parameters order) outside every
// owner's subtree; a match inside one is the warning template-skipped-owned,
// a rule matching nothing the warning unused-template-rule, and two
// placements of one parameter or port on one axis the error
// template-conflict. Overrides then replace their FQN's entry (or are
// appended; an unknown FQN is left to the plan check). Interns the FQNs and
// port names it creates into `doc`, which the tree and owners refer to
// (interning never moves existing names).
BuiltPlan BuildPlan(Document& doc, const ModuleTree& tree, absl::Span<const Owner> owners,
                    const Declarations& declared, DiagnosticSink& sink);

// The info diagnostic unplanned-parameters when some parameter identity is
// declared by no plan entry (it stays replicated): the count and the first
// few full names.
void ReportUnplanned(const ModuleTree& tree, const std::vector<FqnLayout>& plan, DiagnosticSink& sink);

// The parameter declarations of a plan for the shape checks, in plan order.
// A declaration's pointer is Document::DeclarationPointerOf.
std::vector<ParamDeclaration> DeclarationsOf(const ModuleTree& tree, const std::vector<FqnLayout>& plan,
                                             const std::vector<PackedParam>& packed = {});

// Per parameter identity, the placements the plan declares for it (null:
// none, replicated), resolving each entry's local names from its FQN.
std::vector<const NamedPlacements*> PlacementsByParameter(const ModuleTree& tree,
                                                          const std::vector<FqnLayout>& plan);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_PLANNER_H_

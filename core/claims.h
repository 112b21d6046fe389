// Parameter claims (_assign_parameters, spec section 4 step 6).
#ifndef SHARDPLAN_CORE_CLAIMS_H_
#define SHARDPLAN_CORE_CLAIMS_H_

#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "core/module_tree.h"
#include "core/owners.h"

namespace shardplan {

// A declared parameter that names no parameter.
inline constexpr ParamId kNoParam = UINT32_MAX;

struct Claims {
  // Per parameter id: whether it is owned, its owning placement, and where
  // its canonical (first claimant's) full name comes from.
  std::vector<bool> owned;
  std::vector<const NamedPlacements*> placement;  // in the document
  std::vector<ModuleTree::ParamPath> canonical;  // the first claimant's slot
  // Per parameter id: expected by some owner (declared or not under a nested
  // owner).
  std::vector<bool> expected;
  // Owned parameter names, in named_parameters(root) order.
  std::vector<ModuleTree::ParamPath> owned_params;
  // [canonical, alias] pairs, in named_parameters(root) order.
  std::vector<std::pair<std::string, std::string>> aliases;
  // The parameter each entry of an owner's layout params names (kNoParam:
  // none, unknown-parameter), nested ones included; owner by owner, from
  // Owner::declared on. The plan check reuses them for a plan entry that
  // declares the same params at the same path.
  std::vector<ParamId> declared;

  // The canonical full name of an owned parameter.
  std::string CanonicalName(const ModuleTree& tree, ParamId p) const;
};

// Verifies, over owners in entry order: - every declared parameter exists
// (unknown-parameter); - is not under a nested owner (nested-duplicate); - a
// parameter claimed twice has one placement (shared-conflict; an equal
// placement drops the later declaration, the first claimant stays canonical);
// - every expected parameter is declared (omitted-parameters). Fills each
// owner's `required` and reduces its params. Owners whose params are missing
// (ports-missing) claim nothing. `check_omissions` is false when collection
// did not add an owner the document asks for: which parameters a parent must
// declare depends on its nested owners, so omissions would be cascades.
//
// Linear in the number of parameter paths. Name resolution, expected sets
// and omissions are per owner and run in parallel; only the claims on the
// shared owner map run in entry order.
Claims AssignParameters(const ModuleTree& tree, Owners& owners, bool check_omissions, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_CLAIMS_H_

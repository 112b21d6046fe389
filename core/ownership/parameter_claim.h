// One owner's claim of the parameters its layout declares (spec section 4
// step 6), in two parts:
// - ScanOwnerParams needs no other owner's claims: it resolves each
//   declared param (unknown-parameter, nested-duplicate), lists the
//   parameters the owner expects, and which of them it omits;
// - ClaimOwnerParams then claims, owner after owner in entry order, on the
//   claims so far: a parameter claimed before with other placements is
//   shared-conflict, with the same ones the declaration is dropped (a tied
//   parameter's alias); it reports what the scan found in the reference's
//   order: per declared param, then the omissions.
#ifndef SHARDPLAN_CORE_OWNERSHIP_PARAMETER_CLAIM_H_
#define SHARDPLAN_CORE_OWNERSHIP_PARAMETER_CLAIM_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/claims.h"
#include "core/ownership/owners.h"

namespace shardplan {

// What ScanOwnerParams learns about one owner.
struct OwnerParams {
  // The layout's params (null: it has none, and claims nothing).
  const PlacementMap* params = nullptr;
  // Per entry of params, in order: the slot it names; module_path kNoPath
  // when it names none (unknown-parameter), kNested when the slot lies at
  // or under a nested owner (nested-duplicate).
  static constexpr PathId kNested = kNoPath - 1;
  absl::InlinedVector<ModuleTree::ParamRef, 4> resolved;
  // The parameters of the owner's subtree outside nested owners' subtrees,
  // ascending, each once: what it must declare.
  absl::InlinedVector<ParamId, 4> expected;
  // The expected parameters' slots it does not declare, as omitted-parameters
  // names them (relative to the owner, in named_parameters order); null when
  // none is omitted, or omissions are not checked.
  std::unique_ptr<std::vector<std::string>> omitted;
  // The help of the owner's native request, when its patterns match too
  // deep (Owners::native_help): nested-duplicate carries it.
  std::shared_ptr<const FixIt> native_help;

  // As a fresh OwnerParams, keeping the storage (ScanThenApply).
  void Clear() {
    params = nullptr;
    native_help = nullptr;
    resolved.clear();
    expected.clear();
    omitted.reset();
  }
};

// Two placements of one shared parameter side by side: `first`, as
// `first_by` ("its first claimant 'embed.weight'") places it, and `here`,
// the declaration at `pointer`, which the fix replaces by a copy of
// `first`; help alone when `here` was written nowhere (no pointer: a
// template's style placed it).
std::shared_ptr<const FixIt> ConflictFixIt(const Document& doc, std::string_view first_by,
                                           const NamedPlacements& first, const NamedPlacements& here,
                                           std::optional<std::string_view> pointer);

// Fills `scan` (fresh) for `owner`.
void ScanOwnerParams(const ModuleTree& tree, ModuleTree::Resolver& resolver, const Owners& owners, const Owner& owner,
                     bool check_omissions, OwnerParams& scan);

// Claims `scan`'s parameters for `owner` (its scan), records the outcome of
// each declaration in claims.declared and where they start in `owner`,
// marks the expected parameters, and reports.
void ClaimOwnerParams(const ModuleTree& tree, Owner& owner, const OwnerParams& scan, Claims& claims,
                      DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_PARAMETER_CLAIM_H_

// Parameter claims (_assign_parameters, spec section 4 step 6): what every
// owner's declared params claim, in entry order, and the owned names and
// aliases that follow. The rule for one owner is parameter_claim.h's.
#ifndef SHARDPLAN_CORE_OWNERSHIP_CLAIMS_H_
#define SHARDPLAN_CORE_OWNERSHIP_CLAIMS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"

namespace shardplan {

// A declared parameter that names no parameter.
inline constexpr ParamId kNoParam = UINT32_MAX;

// What claims made of the params owners declare: per entry of each owner's
// layout params, in order, owner by owner from Owner::declared on.
struct Declarations {
  enum class Outcome : uint8_t {
    kRequired,  // one of the owner's required parameters (shared-conflict too)
    kDropped,   // a tied parameter already claimed with the same placement
    kRejected,  // unknown-parameter or nested-duplicate
  };
  // The parameter each entry names (kNoParam: none), nested ones included.
  std::vector<ParamId> params;
  std::vector<Outcome> outcomes;

  // The entries of `owner`: none when claims did not see its params.
  absl::Span<const ParamId> ParamsOf(const Owner& owner) const { return Of(params, owner); }
  absl::Span<const Outcome> OutcomesOf(const Owner& owner) const { return Of(outcomes, owner); }
  // The owner's required parameters, sorted, each once.
  SmallVector<ParamId> Required(const Owner& owner) const;

 private:
  template <typename T>
  static absl::Span<const T> Of(const std::vector<T>& all, const Owner& owner) {
    if (owner.declared == Owner::kNotClaimed) return {};
    return absl::MakeConstSpan(all).subspan(owner.declared, owner.layout->params()->size());
  }
};

struct Claims {
  // Per parameter id: its owning placement (null: not owned), and the slot
  // of its first claimant, whose full name is the canonical one (set where
  // placement is).
  std::vector<const NamedPlacements*> placement;  // in the document
  std::vector<ModuleTree::ParamPath> canonical;
  // Per parameter id: whether some owner expects it (declared or not,
  // under no nested owner).
  std::vector<bool> expected;
  size_t expected_count = 0;  // how many are expected
  // [canonical, alias] pairs, in named_parameters(root) order.
  std::vector<std::pair<std::string, std::string>> aliases;
  // What claims made of each owner's params.
  Declarations declared;

  bool owned(ParamId p) const { return placement[p] != nullptr; }
  // The canonical full name of an owned parameter.
  std::string CanonicalName(const ModuleTree& tree, ParamId p) const { return tree.FullName(canonical[p]); }
};

// ClaimOwnerParams (parameter_claim.h) for every owner in entry order, and
// records in each owner where its declarations lie (Owner::declared);
// owners whose params are missing (ports-missing) claim nothing. Then the
// aliases: every slot of an owned parameter other than its canonical one,
// in named_parameters(root) order. `check_omissions` is false when
// collection did not add an owner the document asks for: which parameters
// a parent must declare depends on its nested owners, so omissions would be
// cascades.
//
// The part of each owner's rule that needs no other owner
// (ScanOwnerParams) runs in parallel, ahead of the claims in entry order.
Claims AssignParameters(const ModuleTree& tree, Owners& owners, bool check_omissions, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_CLAIMS_H_

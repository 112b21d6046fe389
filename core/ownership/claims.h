// Parameter claims (_assign_parameters, spec section 4 step 6).
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
  // Per parameter id: its owning placement (null: not owned), and where
  // its canonical (first claimant's) full name comes from.
  std::vector<const NamedPlacements*> placement;  // in the document
  // The first claimant's slot; set (and read) only where placement[p] is:
  // left uninitialized, not zeroed, as a million entries cost a pass.
  std::unique_ptr<ModuleTree::ParamPath[]> canonical;
  // Per parameter id: 1 where some owner expects it (declared or not under
  // a nested owner), else 0. Bytes, not bits: owners scanned on different
  // threads mark them at once.
  std::vector<uint8_t> expected;
  size_t expected_count = 0;  // how many are expected
  // [canonical, alias] pairs, in named_parameters(root) order.
  std::vector<std::pair<std::string, std::string>> aliases;
  // What claims made of each owner's params. The plan check reuses the
  // parameters for a plan entry that declares the same params at the same
  // path.
  Declarations declared;

  bool owned(ParamId p) const { return placement[p] != nullptr; }
  // The canonical full name of an owned parameter.
  std::string CanonicalName(const ModuleTree& tree, ParamId p) const;
};

// Verifies, over owners in entry order: - every declared parameter exists
// (unknown-parameter); - is not under a nested owner (nested-duplicate); - a
// parameter claimed twice has one placement (shared-conflict; an equal
// placement drops the later declaration, the first claimant stays canonical);
// - every expected parameter is declared (omitted-parameters). Records what it
// made of each declared parameter (Claims::declared, Owner::declared).
// Owners whose params are missing (ports-missing) claim nothing.
// `check_omissions` is false when collection did not add an owner the
// document asks for: which parameters a parent must declare depends on its
// nested owners, so omissions would be cascades.
//
// Linear in the number of parameter paths. Name resolution, expected sets
// and omissions are per owner and run in parallel; only the claims on the
// shared owner map run in entry order.
Claims AssignParameters(const ModuleTree& tree, Owners& owners, bool check_omissions, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_CLAIMS_H_

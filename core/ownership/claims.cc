#include "core/ownership/claims.h"

#include <algorithm>
#include <iterator>

#include "core/exec/parallel.h"
#include "core/exec/scan_then_apply.h"
#include "core/ownership/parameter_claim.h"

namespace shardplan {

SmallVector<ParamId> Declarations::Required(const Owner& owner) const {
  const absl::Span<const ParamId> declared = ParamsOf(owner);
  const absl::Span<const Outcome> outcome = OutcomesOf(owner);
  SmallVector<ParamId> required;
  for (size_t i = 0; i < declared.size(); ++i) {
    if (outcome[i] == Outcome::kRequired) required.push_back(declared[i]);
  }
  std::sort(required.begin(), required.end());
  required.erase(std::unique(required.begin(), required.end()), required.end());
  return required;
}

Claims AssignParameters(const ModuleTree& tree, Owners& owners, bool check_omissions, DiagnosticSink& sink) {
  const size_t param_count = tree.doc().parameters.size();
  Claims claims;
  claims.placement.assign(param_count, nullptr);
  claims.canonical.resize(param_count);
  claims.expected.assign(param_count, false);

  const absl::Span<Owner> entries = owners.InOrder();
  ScanThenApply<OwnerParams>(
      entries.size(), 1024,
      [&](size_t begin, size_t end, OwnerParams* scans) {
        ModuleTree::Resolver resolver(tree);
        for (size_t e = begin; e < end; ++e) {
          ScanOwnerParams(tree, resolver, owners, entries[e], check_omissions, scans[e - begin]);
        }
      },
      [&](size_t e, const OwnerParams& scan) { ClaimOwnerParams(tree, entries[e], scan, claims, sink); });

  // The aliases, per chunk of paths in parallel, joined in path order.
  // Distinct slots have distinct full names.
  claims.aliases = ParallelGather<std::pair<std::string, std::string>>(
      0, tree.size(), 4096, [&](size_t first, size_t stop, std::vector<std::pair<std::string, std::string>>& found) {
        for (PathId q = static_cast<PathId>(first); q < stop; ++q) {
          for (const auto& [name, p] : tree.params(q)) {
            if (!claims.owned(p)) continue;
            const ModuleTree::ParamPath& canonical = claims.canonical[p];
            if (canonical.module != q || canonical.name != name) {
              found.emplace_back(tree.FullName(canonical), tree.FullName({q, name}));
            }
          }
        }
      });
  return claims;
}

}  // namespace shardplan

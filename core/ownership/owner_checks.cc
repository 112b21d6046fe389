#include "core/ownership/owner_checks.h"

#include <utility>
#include <vector>

#include "core/exec/scan_then_apply.h"
#include "core/ownership/owner_layout.h"

namespace shardplan {

void CheckOwners(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink) {
  const absl::Span<const Owner> entries = owners.InOrder();
  // Owners are checked in parallel, each into a sink of its own, and their
  // findings appended in owner order as blocks finish: a storm of findings
  // going to a stream is held a few blocks at a time, never whole.
  ScanThenApply<DiagnosticSink>(
      entries.size(), 1024,
      [&](size_t begin, size_t end, DiagnosticSink* found) {
        for (size_t e = begin; e < end; ++e) {
          const Owner& owner = entries[e];
          DiagnosticSink& f = found[e - begin] = DiagnosticSink(sink.mode(), sink.per_group());
          CheckPorts(tree, owner.path, *owner.layout, f);
          CheckPlacements(tree, owner.path, *owner.layout, f);
          // Not for a module whose family layout is applied (cached): spec section 4.5.
          if (owner.parallel && !tree.cached_family(owner.path)) CheckParallelAxes(tree, owner.path, *owner.parallel, f);
        }
      },
      [&](size_t, DiagnosticSink& f) { sink.Append(std::move(f)); });
}

}  // namespace shardplan

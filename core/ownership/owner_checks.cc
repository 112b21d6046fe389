#include "core/ownership/owner_checks.h"

#include <utility>
#include <vector>

#include "core/exec/parallel.h"
#include "core/ownership/owner_layout.h"

namespace shardplan {

void CheckOwners(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink) {
  const absl::Span<const Owner> entries = owners.InOrder();
  // Chunks of owners in parallel, each with its diagnostics in owner order,
  // appended in chunk order.
  constexpr size_t kChunk = 1024;
  std::vector<DiagnosticSink> found(ChunkCount(entries.size(), kChunk), DiagnosticSink(sink.mode(), sink.per_group()));
  ParallelChunks(0, entries.size(), kChunk, [&](size_t c, size_t first, size_t stop) {
    for (size_t e = first; e < stop; ++e) {
      const Owner& owner = entries[e];
      CheckPorts(tree, owner.path, *owner.layout, found[c]);
      CheckPlacements(tree, owner.path, *owner.layout, found[c]);
      // Not for a module whose family layout is applied (cached): spec section 4.5.
      if (owner.parallel && !tree.cached_family(owner.path)) {
        CheckParallelAxes(tree, owner.path, *owner.parallel, found[c]);
      }
    }
  });
  for (DiagnosticSink& f : found) sink.Append(std::move(f));
}

}  // namespace shardplan

#include "core/ownership/nesting.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/exec/parallel.h"

namespace shardplan {

void CheckNesting(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const NameId none = doc.names.Find("none");
  const NameId mesh = doc.names.Find("mesh");
  const absl::Span<const Owner> entries = owners.InOrder();
  // Each entry's binding kind (kNoName when it does not communicate), and
  // whether a communicating owner lies at each path.
  std::vector<NameId> kinds(entries.size(), kNoName);
  std::vector<bool> active(tree.size(), false);
  for (size_t i = 0; i < entries.size(); ++i) {
    const ParallelSpec* parallel = entries[i].parallel;
    if (parallel == nullptr || parallel->binding_kind == none) continue;
    kinds[i] = parallel->binding_kind;
    active[entries[i].path] = true;
  }
  // The (inner, outer) entry pairs of overlapping owners, found per inner
  // owner in parallel and joined in entry order.
  using Overlap = std::pair<uint32_t, uint32_t>;
  const std::vector<Overlap> overlaps =
      ParallelGather<Overlap>(0, entries.size(), 4096, [&](size_t begin, size_t end, std::vector<Overlap>& found) {
        for (size_t e = begin; e < end; ++e) {
          const NameId kind = kinds[e];
          if (kind == kNoName) continue;
          const size_t from = found.size();
          for (PathId a = tree.parent(entries[e].path); a != kNoPath; a = tree.parent(a)) {
            if (!active[a]) continue;
            // The entry of a's module lies at a.
            const uint32_t i = static_cast<uint32_t>(owners.Find(tree.module(a)) - entries.data());
            const NameId outer = kinds[i];
            if (kind == outer || kind == mesh || outer == mesh) found.emplace_back(static_cast<uint32_t>(e), i);
          }
          std::sort(found.begin() + from, found.end());
        }
      });
  for (const auto& [e, i] : overlaps) {
    const std::string_view outer = tree.fqn(entries[i].path), fqn = tree.fqn(entries[e].path);
    // Both owners from one native request's patterns: they match too deep.
    const std::shared_ptr<const FixIt>& help = owners.native_help(entries[e]);
    sink.Report(Code::kOverlappingCommunication,
                {.fqn = fqn,
                 .pointer = doc.PointerOf(entries[e].parallel->origin),
                 .fix_it = owners.native_help(entries[i]) == help ? help : nullptr},
                outer, fqn);
  }
}

}  // namespace shardplan

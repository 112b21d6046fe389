#include "core/result.h"

#include <algorithm>

#include "absl/types/span.h"
#include "core/outcome.h"

namespace shardplan {

std::optional<OwnershipCounts> CountOwnership(const Result& result) {
  if (!result.ok || result.outcome == nullptr || !result.outcome->owned) return std::nullopt;
  const Outcome& outcome = *result.outcome;
  const ModuleTree& tree = *outcome.tree;
  OwnershipCounts counts;
  counts.owners = outcome.owned->entries.size();
  for (PathId q = 0; q < tree.size(); ++q) {
    for (const auto& [name, p] : tree.params(q)) counts.owned_names += outcome.owned->owned[p];
  }
  counts.aliases = outcome.owned->aliases.size();
  return counts;
}

// --- The plan, in place ---------------------------------------------------------

std::optional<PlanView> PlanOf(const Result& result) {
  if (result.outcome == nullptr || !result.outcome->planned) return std::nullopt;
  return PlanView(*result.outcome);
}

size_t PlanView::size() const { return outcome_->planned->entries.size(); }

PlanEntry PlanView::entry(size_t index) const {
  const Document& doc = *outcome_->document;
  const FqnLayout& e = outcome_->planned->entries[index];
  PlanEntry out{doc.Name(e.fqn), &outcome_->planned->provenance[index], {}};
  if (!e.layout.params()) return out;
  for (const PlacementEntry& p : *e.layout.params()) {
    PlannedParameter& param = out.params.emplace_back();
    param.name = doc.Name(p.name);
    for (const AxisPlacement& a : p.placements) param.placements.emplace_back(doc.Name(a.axis), FormatPlacement(a.placement));
  }
  return out;
}

const MemoryReport* PlanView::memory() const {
  const std::optional<MemoryReport>& memory = outcome_->planned->memory;
  return memory ? &*memory : nullptr;
}

size_t PlanView::communication_size() const { return outcome_->planned->communication.records.size(); }

CommunicationRecordView PlanView::communication(size_t index) const {
  const CommunicationRecord& r = outcome_->planned->communication.records[index];
  return {r.fqn, r.port, outcome_->document->Name(r.axis), FormatPlacement(r.from), FormatPlacement(r.to),
          CollectiveName(r.collective)};
}

std::vector<CollectiveTotal> PlanView::collectives() const {
  std::vector<CollectiveTotal> totals;
  for (const CollectiveCount& c : outcome_->planned->communication.counts) {
    totals.push_back({CollectiveName(c.collective), outcome_->document->Name(c.axis), c.count});
  }
  return totals;
}

}  // namespace shardplan

#include "core/result.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/outcome.h"
#include "core/ownership/native_match.h"

namespace shardplan {

Result InvalidDocumentResult(Diagnostic error) {
  Result result;
  const Diagnostic& d = result.diagnostics.emplace_back(std::move(error));
  result.groups.push_back({.code = d.code, .severity = d.severity, .pointer = d.pointer, .count = 1, .listed = {0}});
  return result;
}

std::vector<std::pair<std::string_view, size_t>> CountByCode(const Result& result) {
  std::vector<std::pair<std::string_view, size_t>> counts;
  absl::flat_hash_map<std::string_view, size_t> index;
  for (const DiagnosticGroup& g : result.groups) {
    const auto [it, added] = index.try_emplace(g.code, counts.size());
    if (added) counts.emplace_back(g.code, 0);
    counts[it->second].second += g.count;
  }
  return counts;
}

std::optional<OwnershipCounts> CountOwnership(const Result& result) {
  if (!result.ok || result.outcome == nullptr || !result.outcome->owned) return std::nullopt;
  const Outcome& outcome = *result.outcome;
  const ModuleTree& tree = *outcome.tree;
  OwnershipCounts counts;
  counts.owners = outcome.owners.size();
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

std::optional<TrainingView> TrainingOf(const Result& result) {
  const Outcome* outcome = result.outcome.get();
  if (outcome == nullptr || !outcome->document->training) return std::nullopt;
  const std::optional<MemoryReport>& memory =
      outcome->planned ? outcome->planned->memory : outcome->checked_memory;
  if (!memory || !memory->training) return std::nullopt;
  const Document& doc = *outcome->document;
  TrainingView view{&*memory->training, {}, doc.training->device_memory, doc.training->headroom};
  for (const MeshAxis& axis : doc.mesh) view.axes.push_back(doc.Name(axis.name));
  return view;
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

// --- The owners, in place -------------------------------------------------------

std::optional<OwnersView> OwnersOf(const Result& result) {
  if (result.outcome == nullptr) return std::nullopt;
  return OwnersView(*result.outcome);
}

OwnersView::OwnersView(const Outcome& outcome)
    : outcome_(&outcome), native_patterns_(NativePatterns(*outcome.tree, outcome.owners)) {}

size_t OwnersView::size() const { return outcome_->owners.size(); }

OwnerView OwnersView::owner(size_t index) const {
  const Document& doc = *outcome_->document;
  const ModuleTree& tree = *outcome_->tree;
  const Owner& o = outcome_->owners[index];
  OwnerView out;
  out.fqn = tree.fqn(o.path);
  switch (KindOf(o, tree)) {
    case OwnerKind::kModel: out.kind = "model"; break;
    case OwnerKind::kFamily: out.kind = "family"; break;
    case OwnerKind::kNative: out.kind = "native"; break;
  }
  if (o.layout->origin.kind == Origin::Kind::kNativeSharding) {
    out.native_request = o.layout->origin.index;
    if (const uint32_t k = native_patterns_[index]; k != kNotNative) {
      out.native_pattern_index = k;
      out.native_pattern = doc.Name(doc.native[o.layout->origin.index].match[k]);
    }
  }
  out.pointer = doc.PointerOf(o.layout->origin);
  return out;
}

// --- The owned parameters, in place ---------------------------------------------

struct OwnedParametersView::Index {
  static constexpr uint32_t kNone = UINT32_MAX;
  // The declaration that claimed a parameter first: its owner, and its
  // entry in the owner's layout params.
  struct Claim {
    uint32_t owner = kNone;
    uint32_t entry = 0;
  };
  // The owned slots in named_parameters(root) order, and their parameters.
  std::vector<ModuleTree::ParamPath> slots;
  std::vector<ParamId> params;
  std::vector<Claim> first;  // per parameter id
};

std::optional<OwnedParametersView> OwnedParametersOf(const Result& result) {
  if (result.outcome == nullptr || !result.outcome->owned) return std::nullopt;
  return OwnedParametersView(*result.outcome);
}

OwnedParametersView::OwnedParametersView(const Outcome& outcome) : outcome_(&outcome) {
  auto index = std::make_shared<Index>();
  const ModuleTree& tree = *outcome.tree;
  for (PathId q = 0; q < tree.size(); ++q) {
    for (const auto& [name, p] : tree.params(q)) {
      if (!outcome.owned->owned[p]) continue;
      index->slots.push_back({q, name});
      index->params.push_back(p);
    }
  }
  index->first.resize(outcome.document->parameters.size());
  // Claims go owner by owner in entry order; the first required
  // declaration of a parameter is its claim (a later one is a tied
  // duplicate, dropped, or a shared-conflict, which fails the check).
  for (uint32_t e = 0; e < outcome.owners.size(); ++e) {
    const absl::Span<const ParamId> params = outcome.declared.ParamsOf(outcome.owners[e]);
    const absl::Span<const Declarations::Outcome> outcomes = outcome.declared.OutcomesOf(outcome.owners[e]);
    for (uint32_t i = 0; i < params.size(); ++i) {
      if (outcomes[i] != Declarations::Outcome::kRequired || index->first[params[i]].owner != Index::kNone) continue;
      index->first[params[i]] = {e, i};
    }
  }
  index_ = std::move(index);
}

size_t OwnedParametersView::size() const { return index_->slots.size(); }

OwnedParameterView OwnedParametersView::parameter(size_t index) const {
  const Document& doc = *outcome_->document;
  const ModuleTree& tree = *outcome_->tree;
  const ModuleTree::ParamPath& slot = index_->slots[index];
  const ParamId p = index_->params[index];
  const Index::Claim claim = index_->first[p];
  const PlacementEntry& entry = (*outcome_->owners[claim.owner].layout->params())[claim.entry];
  OwnedParameterView out;
  out.name = tree.FullName(slot);
  out.canonical = tree.FullName(outcome_->owned->canonical[p]);
  out.owner = claim.owner;
  for (const AxisPlacement& a : entry.placements) out.placements.emplace_back(doc.Name(a.axis), FormatPlacement(a.placement));
  return out;
}

}  // namespace shardplan

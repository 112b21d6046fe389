#include "core/planning/plan_entry.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/diagnostics/fixes.h"
#include "core/model/nearest.h"
#include "core/ownership/owner_layout.h"
#include "core/ownership/parameter_claim.h"

namespace shardplan {
namespace {

// Whether every entry of `a` is in `b` with the same placements.
bool Subset(const PlacementMap& a, const PlacementMap& b) {
  absl::flat_hash_map<NameId, const NamedPlacements*> index;
  index.reserve(b.size());
  for (const PlacementEntry& e : b) index.emplace(e.name, &e.placements);
  for (const PlacementEntry& x : a) {
    auto y = index.find(x.name);
    if (y == index.end() || !SamePlacements(x.placements, *y->second)) return false;
  }
  return true;
}

bool SameMap(const MapRef& a, const MapRef& b) {
  if (!a || !b) return !a && !b;
  return a->size() == b->size() && Subset(*a, *b);
}

// The plan layout equals the applied family layout as written: each planned
// parameter keeps its cached placement, and the ports are the same.
bool SameAsCached(const Layout& plan, const Layout& cached) {
  if (!plan.params()->empty() && (!cached.params() || !Subset(*plan.params(), *cached.params()))) return false;
  return SameMap(plan.in_src(), cached.in_src()) && SameMap(plan.in_dst(), cached.in_dst()) &&
         SameMap(plan.out_src(), cached.out_src()) && SameMap(plan.out_dst(), cached.out_dst()) &&
         plan.out_names() == cached.out_names();
}

}  // namespace

void CheckPlanEntry(const ModuleTree& tree, ModuleTree::Resolver& resolver, const Owners& owners, const Claims& claims,
                    const FqnLayout& entry, PlanEntryCheck& check) {
  const Document& doc = tree.doc();
  check.path = resolver.Resolve(doc.Name(entry.fqn));
  if (check.path == kNoPath) {
    check.nearest = NearestModule(tree, 0, doc.Name(entry.fqn));
    return;
  }
  const PlacementMap& params = *entry.layout.params();
  for (const PlacementEntry& p : params) {
    const ModuleTree::ParamRef ref = resolver.ResolveParameter(check.path, p.name);
    check.params.push_back(ref.module_path == kNoPath ? kNoParam : ref.param);
  }
  const Owner* owner = owners.FindAt(tree, check.path);
  if (owner == nullptr) return;
  const SmallVector<ParamId> required = claims.declared.Required(*owner);
  SmallVector<ParamId> declared = check.params;
  std::sort(declared.begin(), declared.end());
  check.removed_ownership = !std::includes(declared.begin(), declared.end(), required.begin(), required.end());
  CheckPorts(tree, check.path, entry.layout, check.found);
  CheckPlacements(tree, check.path, entry.layout, check.found);
  // An applied family's layout must be unchanged. (Section 6 checks the
  // owner's parallel axes again; collection found them clean, or the plan
  // would not be checked.)
  if (tree.cached_family(check.path) &&
      !SameAsCached(entry.layout, doc.modules[tree.module(check.path)].family->cached->sharding)) {
    const std::string_view fqn = doc.Name(entry.fqn);
    check.found.Report(Code::kFamilyLayoutChanged, {.fqn = fqn, .pointer = doc.PointerOf(entry.layout.origin)}, fqn);
  }
}

void ReportUnknownModule(const Document& doc, const FqnLayout& entry, const std::optional<std::string>& nearest,
                         DiagnosticSink& sink) {
  const std::string_view fqn = doc.Name(entry.fqn);
  sink.Report(Code::kUnknownModule,
              {.fqn = fqn,
               .pointer = doc.PointerOf(entry.layout.origin),
               .fix_it = nearest ? MakeFixIt(DidYouMean(*nearest)) : nullptr},
              fqn);
}

void SettlePlanEntry(const Document& doc, const FqnLayout& entry, PlanEntryCheck& check, const Claims& claims,
                     PlanDeclarations& declared, DiagnosticSink& sink) {
  if (check.path == kNoPath) {
    ReportUnknownModule(doc, entry, check.nearest, sink);
    return;
  }
  const std::string_view fqn = doc.Name(entry.fqn);
  for (size_t k = 0; k < check.params.size(); ++k) {
    const ParamId param = check.params[k];
    if (param == kNoParam) continue;
    const PlacementEntry& p = (*entry.layout.params())[k];
    if (declared.first[param] == nullptr) {
      declared.first[param] = &p.placements;
      declared.covered += claims.expected[param];
    } else if (!SamePlacements(*declared.first[param], p.placements)) {
      const std::string_view local = doc.Name(p.name);
      const std::string full = FullName(fqn, local);
      // For an entry a template made, the rule that made it, and nothing
      // there to replace.
      const std::optional<std::string> written = doc.ParamPointerOf(entry.layout.origin, local);
      const std::string pointer = written.value_or(doc.PointerOf(entry.layout.origin));
      sink.Report(Code::kOverrideSharedConflict,
                  {.fqn = fqn,
                   .parameter = full,
                   .pointer = pointer,
                   .fix_it = ConflictFixIt(doc, "an earlier plan entry", *declared.first[param], p.placements, written)},
                  full);
    }
  }
  if (check.removed_ownership) {
    sink.Report(Code::kOverrideRemovedOwnership,
                {.fqn = fqn, .pointer = absl::StrCat(doc.PointerOf(entry.layout.origin), "/params")}, fqn);
  }
  sink.Append(std::move(check.found));
}

}  // namespace shardplan

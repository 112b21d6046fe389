#include "core/plan_check.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/layout_checks.h"
#include "core/messages.h"
#include "core/parse.h"

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

bool SameMap(const std::optional<PlacementMap>& a, const std::optional<PlacementMap>& b) {
  if (!a || !b) return !a && !b;
  return a->size() == b->size() && Subset(*a, *b);
}

// The plan layout equals the applied family layout as written: each planned
// parameter keeps its cached placement, and the ports are the same.
bool SameAsCached(const Layout& plan, const Layout& cached) {
  if (!plan.params->empty() && (!cached.params || !Subset(*plan.params, *cached.params))) return false;
  return SameMap(plan.in_src, cached.in_src) && SameMap(plan.in_dst, cached.in_dst) &&
         SameMap(plan.out_src, cached.out_src) && SameMap(plan.out_dst, cached.out_dst) &&
         plan.out_names == cached.out_names;
}

// The path of a plan entry's module, or kNoPath after reporting
// unknown-module.
PathId ResolveEntry(const ModuleTree& tree, const FqnLayout& entry, DiagnosticSink& sink) {
  const std::string_view fqn = tree.doc().Name(entry.fqn);
  const PathId path = tree.Resolve(fqn);
  if (path == kNoPath) {
    Diagnostic& d = sink.Error("unknown-module", msg::UnknownModule(fqn));
    d.fqn = std::string(fqn);
    d.pointer = entry.layout.pointer;
  }
  return path;
}

}  // namespace

void ReportUnknownModules(const ModuleTree& tree, const std::vector<FqnLayout>& plan, DiagnosticSink& sink) {
  for (const FqnLayout& entry : plan) ResolveEntry(tree, entry, sink);
}

void ValidatePlan(const ModuleTree& tree, const Owners& owners, const Claims& claims,
                  const std::vector<FqnLayout>& plan, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const size_t param_count = doc.parameters.size();
  std::vector<const NamedPlacements*> declared(param_count, nullptr);
  std::vector<bool> covered(param_count, false);
  std::vector<uint32_t> declared_here(param_count, 0);  // plan entry index + 1

  for (uint32_t i = 0; i < plan.size(); ++i) {
    const FqnLayout& entry = plan[i];
    const std::string_view fqn = doc.Name(entry.fqn);
    const PathId path = ResolveEntry(tree, entry, sink);
    if (path == kNoPath) continue;
    const Module& module = doc.modules[tree.module(path)];
    for (const PlacementEntry& p : *entry.layout.params) {
      const std::string_view local = doc.Name(p.name);
      const ModuleTree::ParamRef ref = tree.ResolveParameter(path, local);
      if (ref.module_path == kNoPath) continue;
      const ParamId param = ref.param;
      if (declared[param] != nullptr && !SamePlacements(*declared[param], p.placements)) {
        Diagnostic& d = sink.Error("override-shared-conflict", msg::OverrideSharedConflict(msg::FullName(fqn, local)));
        d.fqn = std::string(fqn);
        d.parameter = msg::FullName(fqn, local);
        d.pointer = absl::StrCat(entry.layout.pointer, "/params/", JsonPointerToken(local));
      } else if (declared[param] == nullptr) {
        declared[param] = &p.placements;
      }
      covered[param] = true;
      declared_here[param] = i + 1;
    }

    const Owner* owner = owners.Find(tree.module(path));
    if (owner == nullptr || owner->path != path) continue;
    const bool keeps_ownership = std::all_of(owner->required.begin(), owner->required.end(),
                                             [&](ParamId p) { return declared_here[p] == i + 1; });
    if (!keeps_ownership) {
      Diagnostic& d = sink.Error("override-removed-ownership", msg::OverrideRemovedOwnership(fqn));
      d.fqn = std::string(fqn);
      d.pointer = absl::StrCat(entry.layout.pointer, "/params");
    }
    CheckPorts(tree, path, entry.layout, sink);
    CheckPlacements(tree, path, entry.layout, sink);
    if (module.family && module.family->cached) {
      if (!SameAsCached(entry.layout, module.family->cached->sharding)) {
        Diagnostic& d = sink.Error("family-layout-changed", msg::FamilyLayoutChanged(fqn));
        d.fqn = std::string(fqn);
        d.pointer = entry.layout.pointer;
      }
    } else if (owner->parallel) {
      CheckParallelAxes(tree, path, *owner->parallel, sink);
    }
  }

  for (ParamId p = 0; p < param_count; ++p) {
    if (claims.expected[p] && !covered[p]) {
      Diagnostic& d = sink.Error("override-removed-coverage", msg::OverrideRemovedCoverage());
      d.parameter = claims.owned[p] ? claims.CanonicalName(tree, p) : std::string(doc.Name(doc.parameters[p].id));
      d.pointer = "/plan/modules";
      break;
    }
  }
}

}  // namespace shardplan

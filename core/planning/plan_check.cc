#include "core/planning/plan_check.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/ownership/layout_checks.h"
#include "core/diagnostics/sink.h"
#include "core/exec/parallel.h"
#include "core/text/json_pointer.h"

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

// Whether CheckPorts and CheckPlacements read the same of both layouts at
// one path: layouts of one document that say the same share their body.
bool SameChecked(const Layout& a, const Layout& b) { return a.body == b.body; }

// The plan's diagnostics, out of line and cold: written in the in-order
// apply, their strings gave it a 400-byte frame and a stack protector, paid
// by a million entries that report nothing.
[[gnu::noinline, gnu::cold]] void ReportUnknownModule(const FqnLayout& entry, const Document& doc,
                                                      DiagnosticSink& sink) {
  const std::string_view fqn = doc.Name(entry.fqn);
  sink.Report(Code::kUnknownModule, {.fqn = fqn, .pointer = doc.PointerOf(entry.layout.origin)}, fqn);
}

[[gnu::noinline, gnu::cold]] void ReportSharedConflict(const FqnLayout& entry, const PlacementEntry& param,
                                                       const Document& doc, DiagnosticSink& sink) {
  const std::string_view fqn = doc.Name(entry.fqn), local = doc.Name(param.name);
  const std::string full = FullName(fqn, local);
  sink.Report(Code::kOverrideSharedConflict,
              {.fqn = fqn,
               .parameter = full,
               .pointer = absl::StrCat(doc.PointerOf(entry.layout.origin), "/params/", JsonPointerToken(local))},
              full);
}

[[gnu::noinline, gnu::cold]] void ReportRemovedOwnership(const FqnLayout& entry, const Document& doc,
                                                         DiagnosticSink& sink) {
  const std::string_view fqn = doc.Name(entry.fqn);
  sink.Report(Code::kOverrideRemovedOwnership,
              {.fqn = fqn, .pointer = absl::StrCat(doc.PointerOf(entry.layout.origin), "/params")}, fqn);
}

// What ValidatePlan learns of one plan entry on its own, in parallel.
struct EntryCheck {
  PathId path = kNoPath;
  const Owner* owner = nullptr;  // the owner at `path`, if any
  // The parameter of each of the entry's params (kNoParam: not resolved):
  // the owner's declarations in claims, when the entry repeats its owner's
  // params, else resolved here.
  bool owners_params = false;
  absl::Span<const ParamId> declared;
  SmallVector<ParamId> resolved;
  absl::Span<const ParamId> params() const { return owners_params ? declared : absl::MakeConstSpan(resolved); }
  bool removed_ownership = false;
  DiagnosticSink found;  // ports, placements, family and parallel axes

  // As a fresh EntryCheck, keeping the storage (ScanThenApply).
  void Clear() {
    path = kNoPath;
    owner = nullptr;
    owners_params = false;
    declared = {};
    resolved.clear();
    removed_ownership = false;
    found.Clear();
  }
};

// A block of entries is checked in two passes (the resolver and the clean
// layouts are the calling task's). The first finds each entry's path and
// owner, and asks for the owner's layout: at a million owners, reading
// those layouts one after another in the second pass was a cache miss each.
void ResolveEntry(const ModuleTree& tree, ModuleTree::Resolver& resolver, const Owners& owners,
                  const FqnLayout& entry, EntryCheck& out) {
  out.path = resolver.Resolve(tree.doc().Name(entry.fqn));
  if (out.path == kNoPath) return;
  // Plans list modules in path order more often than not: the FQNs of the
  // next paths are the ones the resolver compares next.
  __builtin_prefetch(tree.fqn(std::min<PathId>(out.path + 16, tree.size() - 1)).data());
  const Owner* owner = owners.FindAt(tree, out.path);
  if (owner == nullptr) return;
  out.owner = owner;
  __builtin_prefetch(owner->layout);
}

void CheckEntry(const ModuleTree& tree, ModuleTree::Resolver& resolver, CleanLayouts& clean, const Claims& claims,
                const FqnLayout& entry, EntryCheck& out) {
  const Document& doc = tree.doc();
  if (out.path == kNoPath) return;
  const Owner* owner = out.owner;
  const PlacementMap& params = *entry.layout.params();
  // The owner's own params (one stored map): claims resolved them here, and
  // they hold every parameter the owner requires.
  out.owners_params = owner != nullptr && owner->declared != Owner::kNotClaimed &&
                     owner->layout->params().get() == &params;
  if (out.owners_params) {
    out.declared = claims.declared.ParamsOf(*owner);
  } else {
    out.resolved.reserve(params.size());
    for (const PlacementEntry& p : params) {
      const ModuleTree::ParamRef ref = resolver.ResolveParameter(out.path, p.name);
      out.resolved.push_back(ref.module_path == kNoPath ? kNoParam : ref.param);
    }
  }
  if (owner == nullptr) return;
  if (!out.owners_params) {
    // A few declared parameters are scanned, many sorted first.
    constexpr size_t kScan = 16;
    const SmallVector<ParamId>& resolved = out.resolved;
    SmallVector<ParamId> sorted;
    if (resolved.size() > kScan) {
      sorted = resolved;
      std::sort(sorted.begin(), sorted.end());
    }
    const SmallVector<ParamId> required = claims.declared.Required(*owner);
    out.removed_ownership = !std::all_of(required.begin(), required.end(), [&](ParamId p) {
      return resolved.size() > kScan ? std::binary_search(sorted.begin(), sorted.end(), p)
                                     : std::find(resolved.begin(), resolved.end(), p) != resolved.end();
    });
  }
  // The owner checks found the owner's own layout clean (ValidatePlan runs
  // after they found no error), and plans repeat it as it is.
  if (!SameChecked(entry.layout, *owner->layout)) {
    if (!clean.Ports(tree, out.path, entry.layout)) CheckPorts(tree, out.path, entry.layout, out.found);
    if (!clean.Placements(entry.layout)) CheckPlacements(tree, out.path, entry.layout, out.found);
  }
  // An applied family's layout must be unchanged. Otherwise section 6 checks
  // the owner's parallel axes, which CheckOwners found clean (ValidatePlan).
  if (tree.cached_family(out.path) &&
      !SameAsCached(entry.layout, doc.modules[tree.module(out.path)].family->cached->sharding)) {
    const std::string_view fqn = doc.Name(entry.fqn);
    out.found.Report(Code::kFamilyLayoutChanged, {.fqn = fqn, .pointer = doc.PointerOf(entry.layout.origin)}, fqn);
  }
}

}  // namespace

void ReportUnknownModules(const ModuleTree& tree, const std::vector<FqnLayout>& plan, DiagnosticSink& sink) {
  ModuleTree::Resolver resolver(tree);
  for (const FqnLayout& entry : plan) {
    if (resolver.Resolve(tree.doc().Name(entry.fqn)) == kNoPath) ReportUnknownModule(entry, tree.doc(), sink);
  }
}

// Each entry is resolved and checked on its own in parallel; what depends on
// earlier entries (placements declared for shared parameters) is then
// settled in order, and the diagnostics come out in plan order.
void ValidatePlan(const ModuleTree& tree, const Owners& owners, const Claims& claims,
                  const std::vector<FqnLayout>& plan, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const size_t param_count = doc.parameters.size();
  // Per parameter: the placements its first declaration in the plan gives
  // it (null: none declares it).
  std::vector<const NamedPlacements*> declared(param_count, nullptr);
  size_t covered = 0;  // expected parameters that some entry declares
  auto check_entries = [&](size_t begin, size_t end, EntryCheck* checks) {
    ModuleTree::Resolver resolver(tree);
    CleanLayouts clean(doc);
    for (size_t i = begin; i < end; ++i) {
      Prefetch(plan, i + 16);
      if (i + 8 < end) __builtin_prefetch(doc.Name(plan[i + 8].fqn).data());
      ResolveEntry(tree, resolver, owners, plan[i], checks[i - begin]);
    }
    for (size_t i = begin; i < end; ++i) CheckEntry(tree, resolver, clean, claims, plan[i], checks[i - begin]);
  };
  auto settle = [&](size_t i, EntryCheck& check) {
    const FqnLayout& entry = plan[i];
    if (check.path == kNoPath) {
      ReportUnknownModule(entry, doc, sink);
      return;
    }
    const absl::Span<const ParamId> params = check.params();
    for (size_t k = 0; k < params.size(); ++k) {
      const ParamId param = params[k];
      if (param == kNoParam) continue;
      const PlacementEntry& p = (*entry.layout.params())[k];
      if (declared[param] != nullptr && !SamePlacements(*declared[param], p.placements)) {
        ReportSharedConflict(entry, p, doc, sink);
      } else if (declared[param] == nullptr) {
        declared[param] = &p.placements;
        covered += claims.expected[param];
      }
    }
    if (check.removed_ownership) ReportRemovedOwnership(entry, doc, sink);
    sink.Append(std::move(check.found));
  };
  ScanThenApply<EntryCheck>(plan.size(), 1024, check_entries, settle);

  // The first expected parameter no entry declares, looked for only when
  // there is one: a valid plan needs no pass over a million parameters.
  if (covered == claims.expected_count) return;
  for (ParamId p = 0; p < param_count; ++p) {
    if (claims.expected[p] && declared[p] == nullptr) {
      const std::string parameter =
          claims.owned(p) ? claims.CanonicalName(tree, p) : std::string(doc.Name(doc.parameters[p].id));
      sink.Report(Code::kOverrideRemovedCoverage, {.parameter = parameter, .pointer = "/plan/modules"});
      break;
    }
  }
}

}  // namespace shardplan

#include "core/ownership/collect.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/fixes.h"
#include "core/exec/parallel.h"
#include "core/model/nearest.h"
#include "core/model/name_set.h"
#include "core/ownership/native_match.h"
#include "core/ownership/owner_layout.h"
#include "core/text/glob.h"
#include "core/text/json_pointer.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

const ParallelSpec* OrNull(const std::optional<ParallelSpec>& spec) { return spec ? &*spec : nullptr; }

class Collector {
 public:
  Collector(const ModuleTree& tree, Owners& owners, DiagnosticSink& sink)
      : tree_(tree), doc_(tree.doc()), owners_(owners), sink_(sink) {}

  void ModelProviders();
  void Families();
  void NativeRequests();
  bool dropped() const { return dropped_; }

 private:
  // add(fqn, layout, parallel) of the reference, for a resolved path: a
  // second owner of the path's module is multiple-owners and is not added;
  // otherwise the layout's unknown outputs (`unknown`, UnknownOutputs) are
  // unknown-output, and the entry is added all the same.
  void Admit(PathId path, const Layout& layout, const ParallelSpec* parallel,
             const std::vector<std::string_view>& unknown);
  // The output ports a layout's out_names lack (sorted, each once); none
  // when it has no out_names (normalization derives them:
  // NormalizedOutNames).
  std::vector<std::string_view> UnknownOutputs(const Layout& layout) const;
  // unknown-output's help: the nearest names out_names lists.
  std::shared_ptr<const FixIt> UnknownOutputsFixIt(const Layout& layout,
                                                   const std::vector<std::string_view>& unknown) const;
  // Per module: whether it lies in the subtree of a family boundary, or its
  // own subtree holds such a module.
  std::vector<bool> TouchesFamilySubtree() const;

  const ModuleTree& tree_;
  const Document& doc_;
  Owners& owners_;
  DiagnosticSink& sink_;
  bool dropped_ = false;
};

void Collector::Admit(PathId path, const Layout& layout, const ParallelSpec* parallel,
                      const std::vector<std::string_view>& unknown) {
  const ModuleId m = tree_.module(path);
  const std::string_view fqn = tree_.fqn(path);
  if (owners_.Has(m)) {
    dropped_ = true;
    sink_.Report(Code::kMultipleOwners, {.fqn = fqn, .pointer = doc_.PointerOf(layout.origin)}, fqn);
    return;
  }
  if (!unknown.empty()) {
    sink_.Report(Code::kUnknownOutput,
                 {.fqn = fqn,
                  .pointer = absl::StrCat(doc_.PointerOf(layout.origin), "/out_names"),
                  .fix_it = UnknownOutputsFixIt(layout, unknown)},
                 unknown);
  }
  owners_.Add(path, m, &layout, parallel);
}

std::shared_ptr<const FixIt> Collector::UnknownOutputsFixIt(const Layout& layout,
                                                            const std::vector<std::string_view>& unknown) const {
  // The names out_names lists that no out_src or out_dst key uses yet.
  std::vector<std::string_view> named, candidates;
  for (NameId n : *layout.out_names()) {
    named.push_back(doc_.Name(n));
    if (KeyPointers(doc_, layout, {"out_src", "out_dst"}, doc_.Name(n)).empty()) candidates.push_back(doc_.Name(n));
  }
  const std::string listing =
      named.empty() ? "out_names lists no output" : absl::StrCat("out_names lists ", QuotedList(named));
  return RenameUnknownFixIt(unknown, candidates, listing, [&](std::string_view name) {
    return KeyPointers(doc_, layout, {"out_src", "out_dst"}, name);
  });
}

std::vector<std::string_view> Collector::UnknownOutputs(const Layout& layout) const {
  std::vector<std::string_view> unknown;
  if (!layout.out_names()) return unknown;
  const NameSet named(*layout.out_names(), [](NameId n) { return n; });
  for (const auto* map : {&layout.out_src(), &layout.out_dst()}) {
    if (!*map) continue;
    for (const PlacementEntry& e : **map) {
      if (!named.Contains(e.name)) unknown.push_back(doc_.Name(e.name));
    }
  }
  std::sort(unknown.begin(), unknown.end());
  unknown.erase(std::unique(unknown.begin(), unknown.end()), unknown.end());
  return unknown;
}

void Collector::ModelProviders() {
  const std::vector<FqnLayout>& providers = doc_.model_providers;
  // Each provider's path, resolved on its own (in parallel); which ones are
  // added, and the diagnostics, are decided in document order.
  std::vector<PathId> paths(providers.size());
  ParallelFor(providers.size(), 1024, [&](size_t begin, size_t end) {
    ModuleTree::Resolver resolver(tree_);
    for (size_t i = begin; i < end; ++i) paths[i] = resolver.Resolve(doc_.Name(providers[i].fqn));
  });
  // The providers' paths, sorted: a fix renames a provider only to a module
  // no other provider names (made at the first unknown module).
  std::vector<PathId> taken;
  for (size_t i = 0; i < providers.size(); ++i) {
    const FqnLayout& provider = providers[i];
    if (paths[i] == kNoPath) {
      dropped_ = true;
      const std::string_view fqn = doc_.Name(provider.fqn);
      const std::string pointer = doc_.PointerOf(provider.layout.origin);
      const std::optional<std::string> nearest = NearestModule(tree_, 0, fqn);
      std::shared_ptr<const FixIt> fix_it;
      if (nearest) {
        std::vector<FixOperation> fix;
        if (taken.empty()) {
          taken = paths;
          std::sort(taken.begin(), taken.end());
        }
        // The member keyed by the FQN, in providers.sharding.
        const bool keyed = pointer.ends_with(absl::StrCat("/", JsonPointerToken(fqn)));
        if (keyed && !std::binary_search(taken.begin(), taken.end(), tree_.Resolve(*nearest))) {
          fix.push_back(RenameMember(pointer, *nearest));
        }
        fix_it = MakeFixIt(DidYouMean(*nearest), std::move(fix));
      }
      sink_.Report(Code::kUnknownModule, {.fqn = fqn, .pointer = pointer, .fix_it = fix_it}, fqn);
      continue;
    }
    // A model provider's parallel spec is its module's own.
    Admit(paths[i], provider.layout, tree_.parallel(paths[i]), UnknownOutputs(provider.layout));
  }
}

void Collector::Families() {
  // A boundary is visited at its first path only: those are the first paths
  // of the modules with a family layout, in path order.
  std::vector<PathId> boundaries;
  for (ModuleId m : doc_.family_modules) {
    if (doc_.modules[m].family->sharding && tree_.first_path(m) != kNoPath) boundaries.push_back(tree_.first_path(m));
  }
  std::sort(boundaries.begin(), boundaries.end());
  for (PathId p : boundaries) {
    const ModuleId m = tree_.module(p);
    const Module& module = doc_.modules[m];
    const Family& family = *module.family;
    const Layout* layout = &*family.sharding;
    const ParallelSpec* parallel = nullptr;
    if (family.cached) {
      layout = &family.cached->sharding;
      parallel = OrNull(family.cached->parallel);
    } else if (family.parallel && !module.parallel) {
      sink_.Report(Code::kParallelMemberUndeclared,
                   {.fqn = tree_.fqn(p),
                    .pointer = absl::StrCat("/modules/", JsonPointerToken(doc_.Name(module.id)), "/family/parallel")});
    } else {
      parallel = OrNull(module.parallel);
    }
    owners_.Remove(m);
    Admit(p, *layout, parallel, UnknownOutputs(*layout));
  }
}

std::vector<bool> Collector::TouchesFamilySubtree() const {
  std::vector<bool> touches(doc_.modules.size(), false);
  std::vector<ModuleId> stack;
  for (ModuleId b : doc_.family_modules) {
    if (tree_.first_path(b) == kNoPath || touches[b]) continue;
    touches[b] = true;
    stack.push_back(b);
    while (!stack.empty()) {
      const ModuleId m = stack.back();
      stack.pop_back();
      for (const auto& [name, child] : doc_.modules[m].children) {
        if (!touches[child]) {
          touches[child] = true;
          stack.push_back(child);
        }
      }
    }
  }
  // Paths in reverse pre-order visit every child before its parent.
  for (PathId p = static_cast<PathId>(tree_.size()); p-- > 1;) {
    if (touches[tree_.module(p)]) touches[tree_.module(tree_.parent(p))] = true;
  }
  return touches;
}

void Collector::NativeRequests() {
  if (doc_.native.empty()) return;
  std::vector<Glob> globs;  // of every pattern, request by request
  for (const NativeRequest& request : doc_.native) {
    for (NameId pattern : request.match) globs.emplace_back(doc_.Name(pattern));
  }
  const std::vector<std::vector<PathId>> matches = MatchingPaths(tree_, globs);
  const std::vector<bool> touches_family = TouchesFamilySubtree();
  // Per module: 1 + the index (over all requests' patterns) of the last
  // pattern that hit it; a request's patterns have the largest so far.
  std::vector<uint32_t> hit_by(doc_.modules.size(), 0);
  uint32_t g = 0;  // the index of the request's first pattern
  for (size_t r = 0; r < doc_.native.size(); ++r) {
    const NativeRequest& request = doc_.native[r];
    const std::vector<std::string_view> unknown_outputs = UnknownOutputs(request.sharding);
    // The request's patterns with each that matches modules nested in
    // others it matches replaced by narrower ones (each pattern once), and
    // those it replaces.
    std::vector<std::string> narrowed;
    std::vector<std::string_view> wide;
    const auto keep = [&](std::string_view pattern) {
      if (std::find(narrowed.begin(), narrowed.end(), pattern) == narrowed.end()) narrowed.emplace_back(pattern);
    };
    for (size_t k = 0; k < request.match.size(); ++k) {
      const std::vector<PathId>& hits = matches[g + k];
      const std::string_view pattern = doc_.Name(request.match[k]);
      if (std::optional<std::vector<std::string>> narrower = NarrowerPatterns(tree_, pattern, hits)) {
        wide.push_back(pattern);
        for (const std::string& n : *narrower) keep(n);
      } else {
        keep(pattern);
      }
      // A module hit twice by the request (by two patterns, or at two
      // paths) is added once.
      const uint32_t mark = g + static_cast<uint32_t>(k) + 1;
      for (PathId p : hits) {
        const ModuleId m = tree_.module(p);
        if (hit_by[m] > g) continue;
        hit_by[m] = mark;
        if (touches_family[m]) {
          dropped_ = true;
          sink_.Report(Code::kNativeOverlapsFamily, {.fqn = tree_.fqn(p), .pointer = request.pointer}, tree_.fqn(p));
          continue;
        }
        Admit(p, request.sharding, OrNull(request.parallel), unknown_outputs);
      }
      if (hits.empty()) {
        dropped_ = true;
        const std::optional<std::string> nearest = NearestPattern(tree_, doc_.Name(request.match[k]), false);
        sink_.Report(Code::kNativeNoMatch,
                     {.pointer = absl::StrCat(request.pointer, "/match/", k),
                      .fix_it = nearest ? MakeFixIt(DidYouMean(*nearest)) : nullptr},
                     doc_.Name(request.match[k]));
      }
    }
    if (!wide.empty()) {
      const bool one = wide.size() == 1;
      std::string patterns;
      for (std::string_view w : wide) absl::StrAppend(&patterns, patterns.empty() ? "" : " and ", PyRepr(w));
      const std::vector<std::string_view> match(narrowed.begin(), narrowed.end());
      owners_.SetNativeHelp(
          r, MakeFixIt(absl::StrCat(patterns, one ? " also matches" : " also match", " the modules nested in those ",
                                    one ? "it matches" : "they match", " (fnmatch's '*' crosses dots); \"match\": ",
                                    PyReprList(match), " matches only the outer ones"),
                       {ReplaceWithStrings(absl::StrCat(request.pointer, "/match"), narrowed)}));
    }
    g += static_cast<uint32_t>(request.match.size());
  }
}

}  // namespace

bool CollectOwners(const ModuleTree& tree, Owners& owners, DiagnosticSink& sink) {
  Collector collector(tree, owners, sink);
  collector.ModelProviders();
  collector.Families();
  collector.NativeRequests();
  owners.Compact();
  return !collector.dropped();
}

}  // namespace shardplan

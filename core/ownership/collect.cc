#include "core/ownership/collect.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/text/glob.h"
#include "core/diagnostics/sink.h"
#include "core/model/name_set.h"
#include "core/exec/parallel.h"
#include "core/text/json_pointer.h"

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
  // The output ports a layout's out_names lack (sorted, unique:
  // unknown-output); none when it has no out_names (normalization derives
  // them: NormalizedOutNames).
  std::vector<std::string_view> UnknownOutputs(const Layout& layout) const;
  // unknown-output for the owner at `path`, whose outputs lack `unknown`,
  // and multiple-owners for a second owner of its module. Out of line: the
  // adds call them for a few owners among millions.
  [[gnu::noinline]] void ReportOutputs(PathId path, const Layout& layout,
                                       const std::vector<std::string_view>& unknown) const;
  [[gnu::noinline]] void ReportMultipleOwners(PathId path, const Layout& layout);
  // add(fqn, layout, parallel) of the reference, for a resolved path, up to
  // writing the entry. False, after reporting multiple-owners, when the
  // path's module has an owner already. Otherwise true, after reporting the
  // layout's unknown outputs (`unknown`), and the entry is reserved
  // (Owners::Reserve) for the caller to fill in with its layout and
  // parallel spec.
  bool Admit(PathId path, const Layout& layout, const std::vector<std::string_view>& unknown);
  // Marks every module in the subtree of any family boundary; then, per
  // module, whether its own subtree contains such a module.
  std::vector<bool> TouchesFamilySubtree() const;
  // Reserves an entry for every module a request hits (its patterns'
  // `hits`, in order) and returns true, if it adds them all without a
  // diagnostic: no module is hit twice, lies in a family's subtree or has
  // an owner. Otherwise returns false and reserves nothing. In parallel.
  bool ReserveIfAllAdmitted(absl::Span<const absl::Span<const PathId>> hits,
                            const std::vector<bool>& touches_family);
  // For each pattern, every path whose FQN it matches, in named_modules
  // order (none for a literal pattern); matched in parallel over chunks of
  // paths.
  std::vector<std::vector<PathId>> MatchingPaths(const std::vector<Glob>& globs) const;

  const ModuleTree& tree_;
  const Document& doc_;
  Owners& owners_;
  DiagnosticSink& sink_;
  bool dropped_ = false;
};

void Collector::ReportMultipleOwners(PathId path, const Layout& layout) {
  dropped_ = true;
  sink_.Report(Code::kMultipleOwners, {.fqn = tree_.fqn(path), .pointer = doc_.PointerOf(layout.origin)}, tree_.fqn(path));
}

bool Collector::Admit(PathId path, const Layout& layout, const std::vector<std::string_view>& unknown) {
  const ModuleId m = tree_.module(path);
  if (owners_.Has(m)) {
    ReportMultipleOwners(path, layout);
    return false;
  }
  if (!unknown.empty()) ReportOutputs(path, layout, unknown);
  owners_.Reserve(path, m);
  return true;
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

void Collector::ReportOutputs(PathId path, const Layout& layout, const std::vector<std::string_view>& unknown) const {
  sink_.Report(Code::kUnknownOutput,
               {.fqn = tree_.fqn(path), .pointer = absl::StrCat(doc_.PointerOf(layout.origin), "/out_names")}, unknown);
}

// Resolving each provider's FQN depends on the provider alone and runs in
// parallel; which providers are added, and the diagnostics, are decided in
// document order; their entries are written in parallel.
void Collector::ModelProviders() {
  const std::vector<FqnLayout>& providers = doc_.model_providers;
  // Each provider's path, and whether its layout names unknown outputs (a
  // layout is large: the in-order pass reads only these).
  struct Resolved {
    PathId path;
    bool unknown_outputs;
  };
  std::vector<Resolved> resolved(providers.size());
  // Distinct FQNs in a tree without shared modules name distinct modules:
  // if every one is a module without an owner, and no layout names unknown
  // outputs, every provider is added, without a diagnostic, in parallel.
  std::atomic<bool> all_added{!tree_.shared()};
  ParallelFor(providers.size(), 1024, [&](size_t begin, size_t end) {
    ModuleTree::Resolver resolver(tree_);
    for (size_t i = begin; i < end; ++i) {
      Prefetch(providers, i + 16);
      const PathId path = resolver.Resolve(doc_.Name(providers[i].fqn));
      // Only written out_names can name unknown outputs.
      const Layout& layout = providers[i].layout;
      resolved[i] = {path, layout.out_names() && !UnknownOutputs(layout).empty()};
      if (path == kNoPath || resolved[i].unknown_outputs || owners_.Has(tree_.module(path))) {
        all_added.store(false, std::memory_order_relaxed);
      }
    }
  });
  const bool all = all_added.load();
  std::vector<uint32_t> added;  // provider indexes, unless all are added
  if (all) {
    owners_.ReserveAll(
        providers.size(), [&](size_t i) { return resolved[i].path; }, [&](PathId p) { return tree_.module(p); });
  }
  for (uint32_t i = 0; !all && i < providers.size(); ++i) {
    const auto [path, unknown_outputs] = resolved[i];
    if (path == kNoPath) {
      const FqnLayout& provider = providers[i];
      dropped_ = true;
      const std::string_view fqn = doc_.Name(provider.fqn);
      sink_.Report(Code::kUnknownModule, {.fqn = fqn, .pointer = doc_.PointerOf(provider.layout.origin)}, fqn);
    } else if (Admit(path, providers[i].layout,
                     unknown_outputs ? UnknownOutputs(providers[i].layout) : std::vector<std::string_view>())) {
      added.push_back(i);
    }
  }
  owners_.AddReserved([&](size_t k, Owner& owner) {
    owner.layout = &providers[all ? k : added[k]].layout;
    // The module's own spec, read from the tree's packed facts.
    owner.parallel = tree_.parallel(owner.path);
  });
}

void Collector::Families() {
  // A boundary is visited at its first path only: those are the first paths
  // of the modules with a family layout, in path order.
  std::vector<PathId> boundaries;
  for (ModuleId m : doc_.family_modules) {
    if (doc_.modules[m].family->sharding && tree_.first_path(m) != kNoPath) boundaries.push_back(tree_.first_path(m));
  }
  std::sort(boundaries.begin(), boundaries.end());
  std::vector<std::pair<const Layout*, const ParallelSpec*>> added;
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
    if (Admit(p, *layout, UnknownOutputs(*layout))) added.emplace_back(layout, parallel);
  }
  owners_.AddReserved([&](size_t k, Owner& owner) {
    std::tie(owner.layout, owner.parallel) = added[k];
  });
}

std::vector<bool> Collector::TouchesFamilySubtree() const {
  const size_t n = doc_.modules.size();
  std::vector<bool> in_family(n, false);
  std::vector<ModuleId> members, stack;  // members: every module marked
  for (ModuleId b : doc_.family_modules) {
    if (tree_.first_path(b) == kNoPath || in_family[b]) continue;
    in_family[b] = true;
    members.push_back(b);
    stack.push_back(b);
    while (!stack.empty()) {
      ModuleId m = stack.back();
      stack.pop_back();
      for (const auto& [name, child] : doc_.modules[m].children) {
        if (!in_family[child]) {
          in_family[child] = true;
          members.push_back(child);
          stack.push_back(child);
        }
      }
    }
  }
  if (members.empty()) return in_family;  // no family: nothing touches one
  std::vector<bool> touches = in_family;
  if (!tree_.shared()) {
    // A module has one path: from each marked module's, up to the first
    // ancestor already marked (a family's few modules, not every path).
    for (ModuleId m : members) {
      for (PathId q = tree_.parent(tree_.first_path(m)); q != kNoPath && !touches[tree_.module(q)];
           q = tree_.parent(q)) {
        touches[tree_.module(q)] = true;
      }
    }
    return touches;
  }
  // Paths in reverse pre-order visit every child before its parent.
  for (PathId p = static_cast<PathId>(tree_.size()); p-- > 1;) {
    if (touches[tree_.module(p)]) touches[tree_.module(tree_.parent(p))] = true;
  }
  return touches;
}

// Where a glob's automaton goes from `state` on '.' and a child name:
// siblings' names repeat from module to module (a million Linears are
// named by a few), so each (pattern, state, name) is run once per thread
// and then looked up, in a direct-mapped table.
class NameSteps {
 public:
  NameSteps() : table_(kSize) {}
  uint16_t operator()(const Glob::Automaton& automaton, uint32_t g, uint16_t state, NameId name, const Document& doc) {
    Entry& e = table_[(name * 0x9E3779B1u + state * 0x85EBCA77u + g) >> (32 - kBits)];
    if (e.name != name || e.state != state || e.g != g) {
      e = {name, g, state, automaton.Run(automaton.Step(state, '.'), doc.Name(name))};
    }
    return e.next;
  }

 private:
  static constexpr int kBits = 10;
  static constexpr size_t kSize = size_t{1} << kBits;
  struct Entry {
    NameId name = kNoName;
    uint32_t g = 0;
    uint16_t state = 0, next = 0;
  };
  std::vector<Entry> table_;
};

std::vector<std::vector<PathId>> Collector::MatchingPaths(const std::vector<Glob>& globs) const {
  // Every match starts with the pattern's literal prefix; if that holds a
  // dot, the matches lie below the module path before its last dot, a
  // contiguous range of paths.
  struct Range {
    PathId first, stop;
  };
  std::vector<Range> ranges;
  ranges.reserve(globs.size());
  PathId first = static_cast<PathId>(tree_.size()), stop = 0;  // spans every range
  for (const Glob& glob : globs) {
    Range range{0, static_cast<PathId>(tree_.size())};
    const std::string& prefix = glob.literal_prefix();
    if (glob.is_literal()) {
      range = Range{0, 0};
    } else if (const size_t dot = prefix.rfind('.'); dot != std::string::npos) {
      const PathId below = tree_.Resolve(std::string_view(prefix).substr(0, dot));
      range = below == kNoPath ? Range{0, 0} : Range{below + 1, tree_.end(below)};
    }
    ranges.push_back(range);
    if (range.first < range.stop) {
      first = std::min(first, range.first);
      stop = std::max(stop, range.stop);
    }
  }
  std::vector<std::vector<PathId>> matches(globs.size());
  if (first >= stop) return matches;
  const bool ascii = tree_.ascii();
  // A pattern that ends with '*' leaves the quick tests on a text's end
  // nothing to rule out. Over ASCII FQNs it runs as an automaton instead: a
  // path's state follows from its parent's through the path's own name
  // (NameSteps), so FQNs are read only for the root's children and the
  // parent a chunk starts under, and a dead state skips a whole subtree.
  std::vector<std::optional<Glob::Automaton>> automata(globs.size());
  size_t batched = 0;  // patterns with a range, tested in batches
  for (size_t g = 0; g < globs.size(); ++g) {
    if (ascii && globs[g].ends_with_star()) automata[g] = globs[g].AsciiAutomaton();
    batched += !automata[g] && ranges[g].first < ranges[g].stop;
  }
  // Chunk by chunk, every pattern in turn: a chunk's FQNs are read from
  // memory once, their lengths and last characters (ASCII) into arrays
  // that the patterns' quick tests then run over (a single pattern reads
  // each FQN once anyway).
  constexpr PathId kChunk = 2048;
  // Per chunk, each pattern's matches in path order; then each pattern's
  // chunks joined in parallel. (One list of (pattern, path) pairs per
  // chunk, spread over the patterns on one thread afterwards, took 30 us
  // of the DeepSeek-V3-sized model's collection, in order.)
  const size_t chunk_count = ChunkCount(stop - first, kChunk);
  std::vector<std::vector<std::vector<PathId>>> found(globs.size(), std::vector<std::vector<PathId>>(chunk_count));
  PerThread<NameSteps> steps([] { return NameSteps(); });
  ParallelChunks(first, stop, kChunk, [&](size_t c, size_t chunk_begin, size_t chunk_end) {
        const PathId begin = static_cast<PathId>(chunk_begin), end = static_cast<PathId>(chunk_end);
        std::array<uint32_t, kChunk> sizes;
        std::array<uint64_t, kChunk> tails;
        std::array<PathId, kChunk> candidates;
        std::array<uint16_t, kChunk> states;
        const bool batch = ascii && batched > 1;
        if (batch) {
          for (PathId p = begin; p < end; ++p) {
            const std::string_view fqn = tree_.fqn(p);
            sizes[p - begin] = static_cast<uint32_t>(fqn.size());
            tails[p - begin] = Glob::AsciiTail(fqn);
          }
        }
        for (uint32_t g = 0; g < globs.size(); ++g) {
          const Glob& glob = globs[g];
          const PathId lo = std::max(begin, ranges[g].first), hi = std::min(end, ranges[g].stop);
          if (automata[g]) {
            const Glob::Automaton& automaton = *automata[g];
            PathId outside = kNoPath;  // the last parent before lo, and its state
            uint16_t outside_state = 0;
            NameSteps& step = steps.local();
            size_t n = 0;
            for (PathId p = lo; p < hi; ++p) {
              const PathId parent = tree_.parent(p);
              uint16_t state = 0;  // the root's FQN is empty
              if (parent == 0) {
                state = automaton.Run(0, tree_.fqn(p));
              } else if (parent != kNoPath) {
                if (parent >= lo) {
                  state = states[parent - begin];
                } else {
                  if (parent != outside) {
                    outside = parent;
                    outside_state = automaton.Run(0, tree_.fqn(parent));
                  }
                  state = outside_state;
                }
                state = step(automaton, g, state, tree_.name(p), doc_);
              }
              if (automaton.dead[state]) {
                p = tree_.end(p) - 1;  // nothing below matches either
                continue;
              }
              states[p - begin] = state;
              // Matches and misses alternate at random among siblings:
              // no branch on which it is.
              candidates[n] = p;
              n += automaton.accepts[state];
            }
            found[g][c].assign(candidates.begin(), candidates.begin() + n);
            continue;
          }
          if (batch) {
            // The quick tests first, in a tight loop over the arrays; the
            // few candidates left are matched in full.
            size_t n = 0;
            for (PathId p = lo; p < hi; ++p) {
              candidates[n] = p;
              n += glob.MayMatchAscii(sizes[p - begin], tails[p - begin]);
            }
            for (size_t k = 0; k < n; ++k) {
              if (glob.MatchAscii(tree_.fqn(candidates[k]))) found[g][c].push_back(candidates[k]);
            }
            continue;
          }
          for (PathId p = lo; p < hi; ++p) {
            if (ascii ? glob.MatchesAscii(tree_.fqn(p)) : glob.Matches(tree_.fqn(p))) found[g][c].push_back(p);
          }
        }
      });
  for (size_t g = 0; g < globs.size(); ++g) matches[g] = JoinChunks(found[g]);
  return matches;
}

void Collector::NativeRequests() {
  if (doc_.native.empty()) return;
  std::vector<Glob> globs;  // of every pattern, request by request
  for (const NativeRequest& request : doc_.native) {
    for (NameId pattern : request.match) globs.emplace_back(doc_.Name(pattern));
  }
  const std::vector<std::vector<PathId>> matches = MatchingPaths(globs);
  const std::vector<bool> touches_family = TouchesFamilySubtree();
  // Per module: 1 + the index (over all requests' patterns) of the last
  // pattern that hit it in a request decided hit by hit; a request's
  // patterns have the largest so far. Made for the first such request.
  std::vector<uint32_t> hit_by;
  uint32_t g = 0;  // the index of the request's first pattern
  for (const NativeRequest& request : doc_.native) {
    const std::vector<std::string_view> unknown_outputs = UnknownOutputs(request.sharding);
    // Each pattern's hits, in path order; a literal pattern's is the path
    // it spells, if any.
    const size_t patterns = request.match.size();
    std::vector<absl::Span<const PathId>> hits(patterns);
    std::vector<PathId> literal(patterns, kNoPath);
    for (size_t k = 0; k < patterns; ++k) {
      if (!globs[g + k].is_literal()) {
        hits[k] = matches[g + k];
        continue;
      }
      const std::string_view pattern = doc_.Name(request.match[k]);
      if (PathId p = tree_.Resolve(pattern); p != kNoPath && tree_.fqn(p) == pattern) {
        literal[k] = p;
        hits[k] = absl::MakeConstSpan(&literal[k], 1);
      }
    }
    auto no_match = [&](size_t k) {
      dropped_ = true;
      sink_.Report(Code::kNativeNoMatch, {.pointer = absl::StrCat(request.pointer, "/match/", k)},
                   doc_.Name(request.match[k]));
    };
    if (unknown_outputs.empty() && ReserveIfAllAdmitted(hits, touches_family)) {
      for (size_t k = 0; k < patterns; ++k) {
        if (hits[k].empty()) no_match(k);
      }
    } else {
      if (hit_by.empty()) hit_by.assign(doc_.modules.size(), 0);
      for (size_t k = 0; k < patterns; ++k) {
        // A module hit twice by the request (by two patterns, or at two
        // paths) is added once.
        const uint32_t mark = g + static_cast<uint32_t>(k) + 1;
        for (PathId p : hits[k]) {
          const ModuleId m = tree_.module(p);
          if (hit_by[m] > g) continue;
          hit_by[m] = mark;
          if (touches_family[m]) {
            dropped_ = true;
            sink_.Report(Code::kNativeOverlapsFamily, {.fqn = tree_.fqn(p), .pointer = request.pointer}, tree_.fqn(p));
            continue;
          }
          Admit(p, request.sharding, unknown_outputs);
        }
        if (hits[k].empty()) no_match(k);
      }
    }
    owners_.AddReserved([&](size_t, Owner& owner) {
      owner.layout = &request.sharding;
      owner.parallel = OrNull(request.parallel);
    });
    g += static_cast<uint32_t>(patterns);
  }
}

bool Collector::ReserveIfAllAdmitted(absl::Span<const absl::Span<const PathId>> hits,
                                     const std::vector<bool>& touches_family) {
  if (tree_.shared()) return false;  // a module hit twice may be hit at one path
  std::vector<PathId> joined;  // every pattern's hits, for more than one pattern
  absl::Span<const PathId> all = hits.empty() ? absl::Span<const PathId>() : hits[0];
  if (hits.size() > 1) {
    for (absl::Span<const PathId> h : hits) joined.insert(joined.end(), h.begin(), h.end());
    all = joined;
  }
  return owners_.TryReserveAll(
      all.size(), [&](size_t i) { return all[i]; }, [&](PathId p) { return tree_.module(p); },
      [&](ModuleId m) { return touches_family[m]; });
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

void CheckNesting(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const NameId none = doc.names.Find("none");
  const NameId mesh = doc.names.Find("mesh");
  const absl::Span<const Owner> entries = owners.InOrder();
  // Each entry's binding kind (kNoName when inactive), and whether an
  // active owner lies at each path. A model provider's spec is its
  // module's, whose kind the tree keeps packed: a Module is a cache miss.
  // Every kind is written below: `kinds` is not zeroed first (4 MB for a
  // million owners: 3.6% of the phase's instructions at 100,000). The marks
  // are bytes, where they were entry indexes: the array is filled for every
  // path on one thread first, and the few paths found marked look their
  // entry up in the owners' index.
  const std::unique_ptr<NameId[]> kinds(new NameId[entries.size()]);
  // bool, not uint8_t: a store to a char type could alias anything, and
  // the loops would reload what they read from memory after each.
  const std::unique_ptr<bool[]> active(new bool[tree.size()]());
  // Owners have distinct paths: each mark is written once.
  ParallelFor(entries.size(), 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const Owner& o = entries[i];
      NameId kind = kNoName;
      if (o.parallel != nullptr) {
        kind = o.parallel == tree.parallel(o.path) ? tree.binding_kind(o.path) : o.parallel->binding_kind;
      }
      kinds[i] = kind == none ? kNoName : kind;
      if (kinds[i] != kNoName) active[o.path] = true;
    }
  });
  // In parallel: the (inner, outer) entry pairs of overlapping active
  // owners, inners in entry order and each one's outers sorted. Each owner
  // walks all its ancestors: remembering those above the last owner's
  // parent took 63% fewer instructions but a third more time at 1M
  // parameters, where runs of siblings are short and of random length
  // (perf: the time went to the parent's load and the branch that tells a
  // new parent).
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
            const NameId pkind = kinds[i];
            if (kind == pkind || kind == mesh || pkind == mesh) found.emplace_back(static_cast<uint32_t>(e), i);
          }
          if (found.size() - from > 1) std::sort(found.begin() + from, found.end());
        }
      });
  for (const auto& [e, i] : overlaps) {
    const std::string_view outer = tree.fqn(entries[i].path), fqn = tree.fqn(entries[e].path);
    sink.Report(Code::kOverlappingCommunication, {.fqn = fqn, .pointer = doc.PointerOf(entries[e].parallel->origin)},
                outer, fqn);
  }
}

std::vector<uint32_t> NativePatterns(const ModuleTree& tree, absl::Span<const Owner> owners) {
  const Document& doc = tree.doc();
  std::vector<uint32_t> patterns(owners.size(), kNotNative);
  std::vector<std::vector<Glob>> globs(doc.native.size());  // per request, compiled when first needed
  for (size_t i = 0; i < owners.size(); ++i) {
    const Origin& origin = owners[i].layout->origin;
    if (origin.kind != Origin::Kind::kNativeSharding) continue;
    const NativeRequest& request = doc.native[origin.index];
    std::vector<Glob>& compiled = globs[origin.index];
    if (compiled.empty()) {
      for (NameId pattern : request.match) compiled.emplace_back(doc.Name(pattern));
    }
    const std::string_view fqn = tree.fqn(owners[i].path);
    for (uint32_t k = 0; k < compiled.size(); ++k) {
      if (compiled[k].Matches(fqn)) {
        patterns[i] = k;
        break;
      }
    }
  }
  return patterns;
}

}  // namespace shardplan

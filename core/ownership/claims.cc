#include "core/ownership/claims.h"

#include <algorithm>
#include <array>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/sink.h"
#include "core/exec/parallel.h"
#include "core/text/json_pointer.h"

namespace shardplan {
namespace {

// What the per-owner phase learns about one owner, independently of others.
struct OwnerScan {
  // The owner's layout params (null: none, it claims nothing), for the
  // apply to read without reading the layout again.
  const PlacementMap* params = nullptr;
  // Per entry of the layout's params, in order: the parameter slot it names
  // (module_path kNoPath: unknown-parameter; kNested: nested-duplicate).
  static constexpr PathId kNested = kNoPath - 1;
  // Room for them (as many as the params, known before the scan fills
  // them): inline for the few params of a typical layout (an MLP's three).
  // An absl::InlinedVector here, whose every access tests where its items
  // are (and another for the expected parameters, now the thread's
  // Stamps::expected or a leaf's own slots) cost the claims 17% of their
  // instructions at 100k parameters (41.6M against 34.5M, callgrind).
  ModuleTree::ParamRef* StartResolved(size_t n) {
    count = n;
    if (n <= few.size()) return few.data();
    many.resize(n);
    return many.data();
  }
  absl::Span<const ModuleTree::ParamRef> resolved() const {
    return {count <= few.size() ? few.data() : many.data(), count};
  }
  size_t count = 0;
  std::array<ModuleTree::ParamRef, 4> few;
  std::vector<ModuleTree::ParamRef> many;
  // The parameters omitted-parameters names, if any (rare: behind a
  // pointer, as the applies read these one by one, a million at a time).
  std::unique_ptr<std::vector<std::string>> omitted;

  // As a fresh OwnerScan, keeping the storage (ScanThenApply).
  void Clear() {
    params = nullptr;
    count = 0;
    omitted.reset();
  }
};

// Scratch stamps over parameter ids, and the expected parameters of the
// owner being scanned, one set per worker thread.
struct Stamps {
  std::vector<uint32_t> expected_by, declared_by;
  std::vector<ParamId> expected;  // first-seen order
};

// The names omitted-parameters lists for the owner at `root`: the parameter
// slots of its subtree whose parameter is missing(p), in named_parameters
// order, relative to the owner.
template <typename Missing>
std::unique_ptr<std::vector<std::string>> Omitted(const ModuleTree& tree, PathId root, Missing missing) {
  auto names = std::make_unique<std::vector<std::string>>();
  for (PathId q = root; q < tree.end(root); ++q) {
    for (const auto& [name, p] : tree.params(q)) {
      if (missing(p)) names->push_back(FullName(tree.RelativeName(root, q), tree.doc().Name(name)));
    }
  }
  return names;
}

// Whether an owner's entry lies at path q: looked up in the owners' module
// index, where few owners need it (a million leaf owners never ask), rather
// than marked for every owner first. Only a module with several paths needs
// its entry's path: entries are what the applies write (Owner::declared), so
// reading them from a scan on the other CPU would wait for their lines.
class OwnerAt {
 public:
  OwnerAt(const ModuleTree& tree, const Owners& owners) : tree_(tree), owners_(owners) {}
  bool operator()(PathId q) const {
    return tree_.shared() ? owners_.FindAt(tree_, q) != nullptr : owners_.Has(tree_.module(q));
  }

 private:
  const ModuleTree& tree_;
  const Owners& owners_;
};

// Whether the module at `path`, in the subtree of the owner at `root`, is
// a nested owner or lies under one.
bool Nested(const ModuleTree& tree, const OwnerAt& owner_at, PathId root, PathId path) {
  for (PathId a = path; a != root; a = tree.parent(a)) {
    if (owner_at(a)) return true;
  }
  return false;
}

// An owner that declares at most kFew params and expects at most kFew
// parameters is scanned without stamps (ScanFewOwner).
constexpr size_t kFew = 16;

// The parameter an item of a list of expected parameters names: a leaf's
// own slots are taken as they are.
ParamId ParamOf(ParamId p) { return p; }
ParamId ParamOf(const ModuleTree::Slot& s) { return s.second; }
template <typename Item>
bool Contains(absl::Span<const Item> items, ParamId p) {
  for (const Item& item : items) {
    if (ParamOf(item) == p) return true;
  }
  return false;
}

// Calls visit(p) for the parameter p of each slot of the subtree of the
// owner at `root` outside nested owners' subtrees (the owner's expected
// parameters, some maybe more than once), in path order; stops and returns
// false when visit returns false.
template <typename Visit>
bool VisitExpected(const ModuleTree& tree, const OwnerAt& owner_at, PathId root, Visit visit) {
  for (PathId q = root; q < tree.end(root);) {
    if (q != root && owner_at(q)) {
      q = tree.end(q);
      continue;
    }
    for (const auto& [name, p] : tree.params(q)) {
      if (!visit(p)) return false;
    }
    ++q;
  }
  return true;
}

// The expected parameters of the owner at `root`, each once, in `few`.
// Their number, or kFew + 1 if there are more than kFew.
size_t GatherFew(const ModuleTree& tree, const OwnerAt& owner_at, PathId root, std::array<ParamId, kFew>& few) {
  size_t count = 0;
  const bool all = VisitExpected(tree, owner_at, root, [&](ParamId p) {
    if (Contains(absl::Span<const ParamId>(few.data(), count), p)) return true;
    if (count == kFew) return false;
    few[count++] = p;
    return true;
  });
  return all ? count : kFew + 1;
}

// Fills `scan` (fresh) for the owner at `root`, with own slots `slots`,
// that declares at most kFew params and expects the parameters of `few`
// (GatherFew's, or a leaf's own slots), and marks these in `expected`:
// each is looked for among the few declared. Owners like these (a leaf,
// an expert's MLP, an attention block) need no stamps: their searches
// stay within a few cache lines, where the stamps' were scattered over
// arrays as long as the model's parameters (ScanOwner).
template <typename Item>
void ScanFewOwner(const ModuleTree& tree, ModuleTree::Resolver& resolver, const OwnerAt& owner_at, PathId root,
                  absl::Span<const ModuleTree::Slot> slots, absl::Span<const Item> few, bool check_omissions,
                  uint8_t* expected, OwnerScan& scan) {
  // The searches below are plain loops over a few items: std::find_if and
  // std::any_of, unrolled by four, cost 9% of the claims' instructions
  // (100k parameters, callgrind).
  for (const Item& item : few) __atomic_store_n(&expected[ParamOf(item)], uint8_t{1}, __ATOMIC_RELAXED);
  const PlacementMap& params = *scan.params;
  ModuleTree::ParamRef* const resolved = scan.StartResolved(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const PlacementEntry& entry = params[i];
    // A slot's name has no dot: one spelled like the param is the one it
    // names. The resolver answers the rest (none, or a dotted name).
    const ModuleTree::Slot* slot = nullptr;
    for (const ModuleTree::Slot& s : slots) {
      if (s.first == entry.name) {
        slot = &s;
        break;
      }
    }
    if (slot != nullptr) {
      resolved[i] = ModuleTree::ParamRef{root, slot->first, slot->second};
      continue;
    }
    ModuleTree::ParamRef ref = resolver.ResolveParameter(root, entry.name);
    if (ref.module_path != kNoPath && Nested(tree, owner_at, root, ref.module_path)) {
      ref.module_path = OwnerScan::kNested;
    }
    resolved[i] = ref;
  }
  auto undeclared = [&](ParamId p) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (resolved[i].module_path != kNoPath && resolved[i].param == p) return false;
    }
    return true;
  };
  if (!check_omissions) return;
  for (const Item& item : few) {
    if (undeclared(ParamOf(item))) {
      scan.omitted = Omitted(tree, root, [&](ParamId p) { return Contains(few, p) && undeclared(p); });
      return;
    }
  }
}

// Fills `scan` (fresh) for a leaf owner at `root` whose layout declares
// exactly its own slots `slots`, in their order (a Linear's weight and
// bias, as models list them), and marks their parameters in `expected`:
// each param names its slot, and none is omitted. Returns false, doing
// nothing, for any other layout. Such owners are most of a large model's:
// through ScanFewOwner's searches, claims at 1M of them took 9% longer
// (1 CPU).
bool ScanLeafInOrder(PathId root, absl::Span<const ModuleTree::Slot> slots, uint8_t* expected, OwnerScan& scan) {
  const PlacementMap& params = *scan.params;
  if (params.size() != slots.size()) return false;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (params[i].name != slots[i].first) return false;
  }
  ModuleTree::ParamRef* const resolved = scan.StartResolved(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    __atomic_store_n(&expected[slots[i].second], uint8_t{1}, __ATOMIC_RELAXED);
    resolved[i] = ModuleTree::ParamRef{root, slots[i].first, slots[i].second};
  }
  return true;
}

// Fills `scan` (fresh), with `stamp` for this owner in the thread's
// stamps, and marks its expected parameters in `expected`.
void ScanOwner(const ModuleTree& tree, ModuleTree::Resolver& resolver, const OwnerAt& owner_at, const Owner& owner,
               uint32_t stamp, bool check_omissions, uint8_t* expected, Stamps& stamps, OwnerScan& scan) {
  const PathId root = owner.path;
  stamps.expected.clear();
  VisitExpected(tree, owner_at, root, [&](ParamId p) {
    if (stamps.expected_by[p] != stamp) {
      stamps.expected_by[p] = stamp;
      stamps.expected.push_back(p);
      __atomic_store_n(&expected[p], uint8_t{1}, __ATOMIC_RELAXED);
    }
    return true;
  });
  const PlacementMap& params = *scan.params;
  ModuleTree::ParamRef* const resolved = scan.StartResolved(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    ModuleTree::ParamRef ref = resolver.ResolveParameter(root, params[i].name);
    if (ref.module_path != kNoPath) {
      stamps.declared_by[ref.param] = stamp;
      if (Nested(tree, owner_at, root, ref.module_path)) ref.module_path = OwnerScan::kNested;
    }
    resolved[i] = ref;
  }
  if (!check_omissions) return;
  const bool omits = std::any_of(stamps.expected.begin(), stamps.expected.end(),
                                 [&](ParamId p) { return stamps.declared_by[p] != stamp; });
  if (omits) {
    scan.omitted = Omitted(tree, root, [&](ParamId p) {
      return stamps.expected_by[p] == stamp && stamps.declared_by[p] != stamp;
    });
  }
}

// A claim's diagnostic on the owner's param `entry` (unknown-parameter,
// nested-duplicate, shared-conflict), and omitted-parameters: out of line
// and cold, as a million claims make none. Written in the apply, their
// strings and closures gave it a 300-byte frame, a stack protector and
// some 20 instructions per owner before any parameter was claimed.
[[gnu::noinline, gnu::cold]] void ReportParameter(const ModuleTree& tree, const Owner& owner,
                                                  const PlacementEntry& entry, Code code, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const std::string_view fqn = tree.fqn(owner.path), local = doc.Name(entry.name);
  const std::string full = FullName(fqn, local);
  sink.Report(code,
              {.fqn = fqn,
               .parameter = full,
               .pointer = absl::StrCat(doc.PointerOf(owner.layout->origin), "/params/", JsonPointerToken(local))},
              full);
}

[[gnu::noinline, gnu::cold]] void ReportOmitted(const ModuleTree& tree, const Owner& owner, const std::vector<std::string>& omitted,
                                                DiagnosticSink& sink) {
  const std::string_view fqn = tree.fqn(owner.path);
  sink.Report(Code::kOmittedParameters,
              {.fqn = fqn, .pointer = absl::StrCat(tree.doc().PointerOf(owner.layout->origin), "/params")}, fqn,
              std::vector<std::string_view>(omitted.begin(), omitted.end()));
}

}  // namespace

SmallVector<ParamId> Declarations::Required(const Owner& owner) const {
  const absl::Span<const ParamId> declared = ParamsOf(owner);
  const absl::Span<const Outcome> outcome = OutcomesOf(owner);
  SmallVector<ParamId> required;
  for (size_t i = 0; i < declared.size(); ++i) {
    if (outcome[i] == Outcome::kRequired) required.push_back(declared[i]);
  }
  if (!std::is_sorted(required.begin(), required.end())) std::sort(required.begin(), required.end());
  required.erase(std::unique(required.begin(), required.end()), required.end());
  return required;
}

std::string Claims::CanonicalName(const ModuleTree& tree, ParamId p) const { return tree.FullName(canonical[p]); }

Claims AssignParameters(const ModuleTree& tree, Owners& owners, bool check_omissions, DiagnosticSink& sink) {
  const size_t param_count = tree.doc().parameters.size();
  Claims claims;
  claims.placement.assign(param_count, nullptr);
  claims.canonical.reset(new ModuleTree::ParamPath[param_count]);
  claims.expected.assign(param_count, 0);

  const absl::Span<Owner> entries = owners.InOrder();
  const OwnerAt owner_at(tree, owners);

  // Per owner, in parallel: resolution, expected set (marked at once: the
  // marks are a set), omissions; then, in entry order, claims on the shared
  // owner map and the diagnostics.
  PerThread<Stamps> stamps([param_count] {
    return Stamps{std::vector<uint32_t>(param_count, 0), std::vector<uint32_t>(param_count, 0), {}};
  });
  const bool parallel = ArenaThreads() > 1;
  auto scan_owners = [&](size_t begin, size_t end, OwnerScan* scans) {
    Stamps* local = nullptr;  // built on the first owner that needs them
    ModuleTree::Resolver resolver(tree);
    for (size_t e = begin; e < end; ++e) {
      const Owner& owner = entries[e];
      if (!owner.layout->params()) continue;
      OwnerScan& scan = scans[e - begin];
      scan.params = &*owner.layout->params();
      const PathId root = owner.path;
      const bool few_declared = scan.params->size() <= kFew;
      const absl::Span<const ModuleTree::Slot> slots = tree.params(root);
      std::array<ParamId, kFew> few;
      size_t count = 0;
      const bool leaf = tree.end(root) == root + 1;
      if (leaf && ScanLeafInOrder(root, slots, claims.expected.data(), scan)) {
        // Each param names its own slot.
      } else if (few_declared && leaf && slots.size() <= kFew) {
        ScanFewOwner(tree, resolver, owner_at, root, slots, slots, check_omissions, claims.expected.data(), scan);
      } else if (few_declared && (count = GatherFew(tree, owner_at, root, few)) <= kFew) {
        ScanFewOwner(tree, resolver, owner_at, root, slots, absl::Span<const ParamId>(few.data(), count),
                     check_omissions, claims.expected.data(), scan);
      } else {
        if (local == nullptr) local = &stamps.local();
        ScanOwner(tree, resolver, owner_at, owner, static_cast<uint32_t>(e + 1), check_omissions,
                  claims.expected.data(), *local, scan);
      }
      if (!parallel) continue;
      // What the claim will write (on one CPU, the lines are already here).
      PrefetchForWrite(&owner);
      for (const ModuleTree::ParamRef& ref : scan.resolved()) {
        if (ref.module_path == kNoPath || ref.module_path == OwnerScan::kNested) continue;
        PrefetchForWrite(&claims.placement[ref.param]);
        PrefetchForWrite(&claims.canonical[ref.param]);
      }
    }
  };
  using Outcome = Declarations::Outcome;
  // Inlined into ScanThenApply's loop: called once per owner, the call
  // and the captures it reloaded cost Claims 8% at 1M owners (1 CPU).
  auto claim = [&](size_t e, OwnerScan& scan) __attribute__((always_inline)) {
    if (scan.params == nullptr) return;
    Owner& owner = entries[e];
    const PlacementMap& params = *scan.params;
    const absl::Span<const ModuleTree::ParamRef> resolved = scan.resolved();
    owner.declared = static_cast<uint32_t>(claims.declared.params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const PlacementEntry& entry = params[i];
      const ModuleTree::ParamRef& ref = resolved[i];
      Outcome outcome = Outcome::kRequired;
      if (ref.module_path == kNoPath) {
        ReportParameter(tree, owner, entry, Code::kUnknownParameter, sink);
        outcome = Outcome::kRejected;
      } else if (ref.module_path == OwnerScan::kNested) {
        ReportParameter(tree, owner, entry, Code::kNestedDuplicate, sink);
        outcome = Outcome::kRejected;
      } else {
        const ParamId p = ref.param;
        if (!claims.owned(p)) {
          claims.placement[p] = &entry.placements;
          claims.canonical[p] = {ref.module_path, ref.name};
        } else if (!SamePlacements(*claims.placement[p], entry.placements)) {
          ReportParameter(tree, owner, entry, Code::kSharedConflict, sink);
        } else {
          outcome = Outcome::kDropped;
        }
      }
      claims.declared.params.push_back(ref.module_path == kNoPath ? kNoParam : ref.param);
      claims.declared.outcomes.push_back(outcome);
    }
    if (scan.omitted) ReportOmitted(tree, owner, *scan.omitted, sink);
  };
  ScanThenApply<OwnerScan>(entries.size(), 1024, scan_owners, claim);
  claims.expected_count = CountNonZero(claims.expected);

  // named_parameters(root): the aliases, per chunk of paths in parallel,
  // then joined in order.
  constexpr size_t kGrain = 4096;
  const size_t chunk_count = ChunkCount(tree.size(), kGrain);
  std::vector<std::vector<std::pair<std::string, std::string>>> aliases(chunk_count);
  ParallelChunks(0, tree.size(), kGrain, [&](size_t c, size_t first, size_t stop) {
    for (PathId q = static_cast<PathId>(first); q < stop; ++q) {
      for (const auto& [name, p] : tree.params(q)) {
        if (!claims.owned(p)) continue;
        const ModuleTree::ParamPath here{q, name};
        // Distinct slots have distinct full names.
        const ModuleTree::ParamPath& canonical = claims.canonical[p];
        if (canonical.module != q || canonical.name != name) {
          aliases[c].emplace_back(tree.FullName(canonical), tree.FullName(here));
        }
      }
    }
  });
  for (auto& chunk : aliases) std::move(chunk.begin(), chunk.end(), std::back_inserter(claims.aliases));
  return claims;
}

}  // namespace shardplan

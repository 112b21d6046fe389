// Owners ("entries") of module-owned layouts, as collect_owned_layouts keeps
// them: an insertion-ordered map keyed by module identity.
#ifndef SHARDPLAN_CORE_OWNERSHIP_OWNERS_H_
#define SHARDPLAN_CORE_OWNERSHIP_OWNERS_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/model/document.h"
#include "core/model/module_tree.h"
#include "core/exec/parallel.h"

namespace shardplan {

enum class OwnerKind : uint8_t { kModel, kFamily, kNative };

// An owner refers to its layout and parallel spec in the document (native
// requests share theirs among all their owners) and to what claims made of
// its layout's params (Claims::declared): 24 bytes, read by every check at
// up to a million owners. What kind of owner it is follows from where its
// layout lies (KindOf).
struct Owner {
  // Leaves every field unset: Owners::AddReserved writes them all, in
  // parallel. (Defaults would be written by the vector as it grows: a
  // serial pass over a million owners, before the parallel one.)
  Owner() {}
  PathId path;  // the entry's FQN (its module: ModuleTree::module(path))
  // Where claims put what they made of each of layout->params
  // (Declarations); kNotClaimed before claims or without params.
  static constexpr uint32_t kNotClaimed = UINT32_MAX;
  uint32_t declared;
  const Layout* layout;
  const ParallelSpec* parallel;  // null when none
};

// Which collection step added `owner`, collected from `tree`'s document: a
// native request's layout lies in the document's native requests, a
// family's in its module's family, a model provider's elsewhere.
OwnerKind KindOf(const Owner& owner, const ModuleTree& tree);

// The out_names of a layout after output normalization: its own, else the
// names of its out_src then out_dst ports, each once, in order (nullopt when
// it has neither out_names nor output ports).
std::optional<SmallVector<NameId>> NormalizedOutNames(const Layout& layout);

class Owners {
 public:
  // Room for an entry per module (a module has at most one): a model has up
  // to millions of owners. The room is reserved, not touched: only
  // AddReserved writes entries, in parallel, so their pages are faulted in
  // on every thread (touching all of it first, for the serial adds of an
  // earlier version, cost the DeepSeek-V3-sized model's collection 8 us
  // on two CPUs, for 60,000 modules' room and 15,000 owners).
  explicit Owners(size_t module_count);

  bool Has(ModuleId m) const { return index_[m] != kNone; }
  // Adding entries comes in two steps, so that the entries of a million
  // owners are written in parallel: Reserve(path, module) takes the next
  // place in insertion order for module `module` (which must not have an
  // entry) at `path`, and Has(module) is true at once; AddReserved(fill)
  // then writes every reserved entry, calling fill(k, owner) for the kth
  // one (path set, declared kNotClaimed, layout and parallel null) in
  // parallel. In between, only Has, Reserve, ReserveAll, TryReserveAll and
  // Remove (of an entry added before) may be called.
  void Reserve(PathId path, ModuleId module) {
    index_[module] = static_cast<uint32_t>(entries_.size() + reserved_.size());
    reserved_.push_back(path);
  }
  // Reserve(path_at(k), module_of(path_at(k))) for every k < n in order,
  // written in parallel: the modules must be distinct.
  template <typename PathAt, typename ModuleOf>
  void ReserveAll(size_t n, PathAt&& path_at, ModuleOf&& module_of) {
    const size_t first = reserved_.size(), base = entries_.size() + first;
    reserved_.resize(first + n);
    ParallelFor(n, 1024, [&](size_t begin, size_t end) {
      for (size_t k = begin; k < end; ++k) {
        const PathId path = path_at(k);
        reserved_[first + k] = path;
        index_[module_of(path)] = static_cast<uint32_t>(base + k);
      }
    });
  }
  // Like ReserveAll for modules that may repeat, have an entry or be
  // refused (refuse(module) true): reserves them all and returns true if
  // none does, else returns false and leaves the owners as they were. In
  // parallel, with no marks of its own: each hit takes its module's index
  // unless the module has one (an entry, or another hit of it), and then
  // checks that the index is its own.
  template <typename PathAt, typename ModuleOf, typename Refuse>
  bool TryReserveAll(size_t n, PathAt&& path_at, ModuleOf&& module_of, Refuse&& refuse) {
    const size_t first = reserved_.size(), base = entries_.size() + first;
    reserved_.resize(first + n);
    // Hits of one module race on its index (relaxed): whichever store
    // stays, the other hit does not find its own index.
    auto index_of = [&](size_t k) -> uint32_t& { return index_[module_of(path_at(k))]; };
    // Whether holds(begin, end) is true for every chunk, run in parallel.
    auto all = [&](auto&& holds) {
      std::atomic<bool> ok{true};
      ParallelFor(n, 1024, [&](size_t begin, size_t end) {
        if (!holds(begin, end)) ok.store(false, std::memory_order_relaxed);
      });
      return ok.load();
    };
    const bool taken = all([&](size_t begin, size_t end) {
      // In batches: each batch's modules first, then their indexes. GCC
      // does not keep memory in registers across an atomic access, so one
      // loop reloaded the captured pointers before every item's loads, and
      // those loads (cache misses, 60% of the loop's time) did not overlap.
      constexpr size_t kBatch = 16;
      constexpr ModuleId kRefused = UINT32_MAX;  // no module has this id
      std::array<ModuleId, kBatch> modules;
      bool ok = true;
      for (size_t from = begin; from < end; from += kBatch) {
        const size_t to = std::min(end, from + kBatch);
        for (size_t k = from; k < to; ++k) {
          const PathId path = path_at(k);
          reserved_[first + k] = path;
          const ModuleId m = module_of(path);
          modules[k - from] = refuse(m) ? kRefused : m;
        }
        uint32_t* const index = index_.data();
        for (size_t k = from; k < to; ++k) {
          const ModuleId m = modules[k - from];
          if (m == kRefused || __atomic_load_n(&index[m], __ATOMIC_RELAXED) != kNone) {
            ok = false;
          } else {
            __atomic_store_n(&index[m], static_cast<uint32_t>(base + k), __ATOMIC_RELAXED);
          }
        }
      }
      return ok;
    });
    auto own_indexes = [&](size_t begin, size_t end) {  // each hit's module kept the hit's index
      bool ok = true;
      for (size_t k = begin; k < end; ++k) ok &= index_of(k) == base + k;
      return ok;
    };
    if (taken && all(own_indexes)) return true;
    // Undone: the indexes this call wrote lie in [base, base + n).
    ParallelFor(n, 1024, [&](size_t begin, size_t end) {
      for (size_t k = begin; k < end; ++k) {
        uint32_t& index = index_of(k);
        const uint32_t own = __atomic_load_n(&index, __ATOMIC_RELAXED);
        if (own != kNone && own >= base && own < base + n) __atomic_store_n(&index, kNone, __ATOMIC_RELAXED);
      }
    });
    reserved_.resize(first);
    return false;
  }
  template <typename Fill>
  void AddReserved(Fill&& fill) {
    const size_t base = entries_.size();
    entries_.resize(base + reserved_.size());
    removed_.resize(entries_.size(), false);
    ParallelFor(reserved_.size(), 4096, [&](size_t begin, size_t end) {
      for (size_t k = begin; k < end; ++k) {
        Owner& owner = entries_[base + k];
        owner.path = reserved_[k];
        owner.declared = Owner::kNotClaimed;
        owner.layout = nullptr;
        owner.parallel = nullptr;
        fill(k, owner);
      }
    });
    reserved_.clear();
  }
  // Removes the entry of `m`, if any (a family replaces a model provider).
  // Compact must follow before the entries are read in order.
  void Remove(ModuleId m);
  // Drops the removed entries, keeping the others' order (CollectOwners
  // calls it last).
  void Compact();

  // The entries, in insertion order: no pointer array is built (a million
  // owners' would be 8 MB for each phase that reads them).
  absl::Span<Owner> InOrder() {
    assert(removed_count_ == 0);
    return absl::MakeSpan(entries_);
  }
  absl::Span<const Owner> InOrder() const {
    assert(removed_count_ == 0);
    return absl::MakeConstSpan(entries_);
  }
  // The number of live entries.
  size_t size() const { return entries_.size() - removed_count_; }
  const Owner* Find(ModuleId m) const { return index_[m] == kNone ? nullptr : &entries_[index_[m]]; }
  // The entry at `path` of `tree`, if any: its module's, where that lies at
  // this path (a shared module's entry lies at one of its paths).
  const Owner* FindAt(const ModuleTree& tree, PathId path) const {
    const Owner* owner = Find(tree.module(path));
    return owner != nullptr && owner->path == path ? owner : nullptr;
  }
  // The entries in insertion order (compacted), moved out; no entry is left.
  std::vector<Owner> Take();

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<Owner> entries_;
  std::vector<PathId> reserved_;  // paths of the entries AddReserved writes next
  std::vector<bool> removed_;
  size_t removed_count_ = 0;  // entries removed since the last Compact
  std::vector<uint32_t> index_;  // module -> entries_ index
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_OWNERS_H_

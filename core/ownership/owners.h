// Owners ("entries") of module-owned layouts, as collect_owned_layouts keeps
// them (spec section 4): an insertion-ordered map keyed by module identity,
// one entry per module at most.
#ifndef SHARDPLAN_CORE_OWNERSHIP_OWNERS_H_
#define SHARDPLAN_CORE_OWNERSHIP_OWNERS_H_

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/diagnostic.h"
#include "core/model/document.h"
#include "core/model/module_tree.h"

namespace shardplan {

enum class OwnerKind : uint8_t { kModel, kFamily, kNative };

// An owner refers to its layout and parallel spec in the document (native
// requests share theirs among all their owners) and to what claims made of
// its layout's params (Declarations, core/ownership/claims.h). What kind of
// owner it is follows from where its layout lies (KindOf).
struct Owner {
  PathId path = kNoPath;  // the entry's FQN (its module: ModuleTree::module(path))
  // Where claims put what they made of each of layout->params; kNotClaimed
  // before claims, and for an owner whose layout has no params.
  static constexpr uint32_t kNotClaimed = UINT32_MAX;
  uint32_t declared = kNotClaimed;
  const Layout* layout = nullptr;
  const ParallelSpec* parallel = nullptr;  // null when none
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
  // For a document of `module_count` modules.
  explicit Owners(size_t module_count) : index_(module_count, kNone) {
    // Room for every module's entry, reserved once: grown by doubling, the
    // entries were copied into fresh memory several times.
    entries_.reserve(module_count);
  }

  bool Has(ModuleId m) const { return index_[m] != kNone; }
  // Adds the entry of module `module` (which has none) at `path`, after
  // every other.
  void Add(PathId path, ModuleId module, const Layout* layout, const ParallelSpec* parallel) {
    assert(!Has(module));
    index_[module] = static_cast<uint32_t>(entries_.size());
    entries_.push_back({path, Owner::kNotClaimed, layout, parallel});
    removed_.push_back(false);
  }
  // Removes the entry of `m`, if any (a family replaces a model provider).
  // Compact must follow before the entries are read in order.
  void Remove(ModuleId m);
  // Drops the removed entries, keeping the others' order (CollectOwners
  // calls it last).
  void Compact();

  // The entries, in insertion order.
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

  // What to change in native request `request` whose patterns match modules
  // nested in others they match (NarrowerPatterns): the diagnostics that
  // nesting causes share it. Null when there is nothing to say.
  void SetNativeHelp(size_t request, std::shared_ptr<const FixIt> help) {
    if (native_help_.size() <= request) native_help_.resize(request + 1);
    native_help_[request] = std::move(help);
  }
  const std::shared_ptr<const FixIt>& native_help(size_t request) const {
    static const std::shared_ptr<const FixIt> kNone;
    return request < native_help_.size() ? native_help_[request] : kNone;
  }
  // That of the native request whose layout `owner` has, if any.
  const std::shared_ptr<const FixIt>& native_help(const Owner& owner) const {
    return native_help(owner.layout->origin.kind == Origin::Kind::kNativeSharding ? owner.layout->origin.index
                                                                                  : SIZE_MAX);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<Owner> entries_;
  std::vector<bool> removed_;  // per entry
  size_t removed_count_ = 0;   // entries removed since the last Compact
  std::vector<uint32_t> index_;  // module -> entries_ index
  std::vector<std::shared_ptr<const FixIt>> native_help_;  // per native request
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_OWNERS_H_

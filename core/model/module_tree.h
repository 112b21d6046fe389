// The module tree as the reference framework sees it (spec section 3): every
// path of named_modules (duplicates kept: a shared module appears once per
// path), in pre-order, as dense path ids.
//
// Pre-order makes each subtree a contiguous id range [p, end(p)), so
// named_modules(M) of the module at path p is that range in order, and
// named_parameters(M) walks it. FQN strings live in one arena.
#ifndef SHARDPLAN_CORE_MODEL_MODULE_TREE_H_
#define SHARDPLAN_CORE_MODEL_MODULE_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/model/document.h"
#include "core/text/bytes.h"

namespace shardplan {

using PathId = uint32_t;
inline constexpr PathId kNoPath = UINT32_MAX;

// The full name of `local` under the module at `fqn`: fqn + "." + local, or
// local at the root ("").
std::string FullName(std::string_view fqn, std::string_view local);

class ModuleTree {
 public:
  // Expands `doc` from its root. The document must have passed ParseDocument
  // (no cycles, within the path limits). `in_order_resolution`: whether its
  // Resolvers take their fast path (core/fast_paths.h).
  explicit ModuleTree(const Document& doc, bool in_order_resolution = true);

  const Document& doc() const { return doc_; }
  size_t size() const { return module_.size(); }
  // Whether every path's FQN is ASCII.
  bool ascii() const { return ascii_; }
  // Whether some module has several paths (a shared module).
  bool shared() const { return shared_; }

  ModuleId module(PathId p) const { return module_[p]; }
  PathId parent(PathId p) const { return parent_[p]; }
  // One past the last path of p's subtree.
  PathId end(PathId p) const { return end_[p]; }
  // The child name by which p's parent reaches p (kNoName at the root).
  NameId name(PathId p) const { return name_[p]; }
  std::string_view fqn(PathId p) const {
    // Offsets are in range by construction: no substr bounds check.
    return std::string_view(fqn_data_.data() + fqn_offset_[p], fqn_offset_[p + 1] - fqn_offset_[p]);
  }
  // The path of child number `index` (in the module's children order) of p.
  PathId child(PathId p, size_t index) const { return child_paths_[child_begin_[p] + index]; }

  // What the checks read of the module at path q, kept packed by the tree:
  // they go owner after owner, parameter after parameter, and read little
  // of a Module.
  //
  // The parameter slots (name, parameter), in the document's order.
  using Slot = std::pair<NameId, ParamId>;
  absl::Span<const Slot> params(PathId q) const { return Packed(slots_, slot_begin_, module_[q]); }
  // Its forward names (Module::forward) and whether it takes **kwargs.
  absl::Span<const NameId> forward(PathId q) const { return Packed(forward_, forward_begin_, module_[q]); }
  bool var_keyword(PathId q) const { return var_keyword_[module_[q]]; }
  // Its parallel spec, or null, and the spec's binding_kind (kNoName when
  // none), read without reading the Module.
  const ParallelSpec* parallel(PathId q) const {
    const ModuleId m = module_[q];
    return binding_kind_[m] != kNoName ? &*doc_.modules[m].parallel : nullptr;
  }
  NameId binding_kind(PathId q) const { return binding_kind_[module_[q]]; }
  // Whether it has a family with a cached layout.
  bool cached_family(PathId q) const { return cached_family_[module_[q]]; }

  // The first path of `m` in named_modules, or kNoPath if unreachable.
  PathId first_path(ModuleId m) const { return first_path_[m]; }

  // get_submodule: follows the dot-separated child names of `fqn` from the
  // root ("" is the root). kNoPath if a step is missing.
  PathId Resolve(std::string_view fqn) const { return ResolveFrom(0, fqn); }
  // Follows `relative` (non-empty names separated by dots) from path `from`.
  PathId ResolveFrom(PathId from, std::string_view relative) const;
  // A parameter named `local` ("a.b.weight": child names then a parameter
  // name) relative to path `from`, as named_parameters names it.
  struct ParamRef {
    PathId module_path = kNoPath;  // the registering module's path; kNoPath if none
    NameId name = kNoName;         // the slot's name in that module
    ParamId param = 0;
  };
  ParamRef ResolveParameter(PathId from, std::string_view local) const;

  // Resolves FQNs one after another, each as Resolve would, but starting
  // from where the previous one led: documents list modules in path order
  // ("layers.3.attn", "layers.3.mlp", "layers.4"), so the path after the
  // previous one's subtree is tried first, as a whole FQN; otherwise the
  // walk starts from the previous path's deepest ancestor that is a leading
  // segment of the FQN, and where they part, a few siblings after the
  // previous one's path there are compared first, and below it each
  // module's first children: in path order, no name is hashed in a large
  // ModuleList, nor on entering its next block, nor for a skipped sibling.
  // Parameter names, dotted ones ("gate_proj.weight") included, which
  // layouts repeat owner after owner, are split into interned names once
  // (the document's names must not change while the resolver is used). Not
  // thread-safe: one per thread or task.
  class Resolver {
   public:
    explicit Resolver(const ModuleTree& tree) : tree_(tree) {}
    // The path after the last one's subtree, the usual answer, is tried
    // first, inline.
    PathId Resolve(std::string_view fqn) {
      if (!tree_.in_order_resolution_) return tree_.Resolve(fqn);
      const PathId after = tree_.end(last_);
      if (after < tree_.size() && SameText(tree_.fqn(after), fqn)) return last_ = after;
      return ResolveAfterMiss(after, fqn);
    }
    // ModuleTree::ResolveParameter(from, the text of local).
    ParamRef ResolveParameter(PathId from, NameId local);

   private:
    // Resolve, where `after` (the path after the last one's subtree) is
    // not the path `fqn` names.
    PathId ResolveAfterMiss(PathId after, std::string_view fqn);
    // A local name split at its dots: the children's names, then the
    // slot's (a name with a leading dot takes the general path).
    struct Split {
      NameId local = kNoName;
      bool leading_dot = false;
      SmallVector<NameId> names;
    };
    const ModuleTree& tree_;
    PathId last_ = 0;  // the deepest path the last FQN led to
    Split splits_[16];  // direct-mapped by local name
  };
  // A parameter slot of the module at `module` named `name`; its full name
  // is fqn(module) + "." + name (name alone at the root).
  struct ParamPath {
    PathId module;
    NameId name;
  };
  std::string FullName(ParamPath param) const;
  // The child of p named `name`, or kNoPath.
  PathId ChildNamed(PathId p, NameId name) const;

  // The name of path q relative to ancestor-or-self p ("" when q == p).
  std::string_view RelativeName(PathId p, PathId q) const {
    std::string_view full = fqn(q);
    if (q == p) return {};
    size_t skip = fqn_offset_[p + 1] - fqn_offset_[p];
    return skip == 0 ? full : full.substr(skip + 1);
  }

 private:
  static uint64_t Key(uint32_t owner, NameId name) { return (uint64_t{owner} << 32) | name; }
  // The child of p named `segment` (one step of get_submodule), or kNoPath.
  PathId ChildBySegment(PathId p, std::string_view segment) const;
  // The slot named `name` of the module at q.
  ParamRef ParameterOf(PathId q, NameId name) const;
  // Modules with at most this many children (parameters) are not indexed:
  // scanning a few inline pairs beats a hash lookup, and the indexes stay
  // small.
  static constexpr size_t kScanLimit = 8;
  static constexpr uint32_t kNone = UINT32_MAX;
  // Module m's items of a packed array.
  template <typename T>
  static absl::Span<const T> Packed(const std::vector<T>& items, const std::vector<uint32_t>& begin, ModuleId m) {
    return {items.data() + begin[m], begin[m + 1] - begin[m]};
  }
  // The index of `name` among module m's n items (name_of(item) their
  // names), or kNone.
  template <typename T, typename NameOf>
  static uint32_t IndexOf(ModuleId m, const T* items, uint32_t n, NameOf name_of,
                          const absl::flat_hash_map<uint64_t, uint32_t>& index, NameId name) {
    if (n <= kScanLimit) {
      for (uint32_t i = 0; i < n; ++i) {
        if (name_of(items[i]) == name) return i;
      }
      return kNone;
    }
    auto it = index.find(Key(m, name));
    return it == index.end() ? kNone : it->second;
  }

  const Document& doc_;
  const bool in_order_resolution_;
  std::vector<ModuleId> module_;
  std::vector<PathId> parent_;
  std::vector<PathId> end_;
  std::vector<NameId> name_;
  std::vector<uint64_t> fqn_offset_;  // size() + 1 entries
  std::string fqn_data_;
  bool ascii_ = false;
  bool shared_ = false;
  std::vector<uint32_t> child_begin_;
  std::vector<PathId> child_paths_;
  std::vector<PathId> first_path_;
  // Packed copies of the modules' child names, parameter slots and
  // forward names: module m's start at child_name_begin_[m], slot_begin_[m]
  // and forward_begin_[m] (one more entry each, for the end of the last).
  // Each reader touches only its own arrays.
  std::vector<uint32_t> child_name_begin_, slot_begin_, forward_begin_;
  std::vector<NameId> child_names_;
  std::vector<Slot> slots_;
  std::vector<NameId> forward_;
  std::vector<bool> var_keyword_, cached_family_;  // per module
  std::vector<NameId> binding_kind_;               // per module
  // (module, name) -> index, for modules with more than kScanLimit.
  absl::flat_hash_map<uint64_t, uint32_t> child_index_;
  absl::flat_hash_map<uint64_t, uint32_t> param_index_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_MODULE_TREE_H_

#include "core/model/module_tree.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/text/utf8.h"

namespace shardplan {
namespace {

// How many children Resolver::Resolve compares by name, from where the last
// FQN led, before it hashes the name.
constexpr int kSiblingsCompared = 8;
// How many paths Resolver::Resolve compares whole, in pre-order from the
// one after the last path's subtree, first: a list in path order that
// skips a few paths names one of them.
constexpr PathId kPathsCompared = 4;

// The length of the longest common prefix of a and b.
size_t CommonPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return static_cast<size_t>(std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin());
}

}  // namespace

ModuleTree::ModuleTree(const Document& doc, bool in_order_resolution)
    : doc_(doc), in_order_resolution_(in_order_resolution) {
  first_path_.assign(doc.modules.size(), kNoPath);
  // Only modules with many children or parameters (a ModuleList of
  // layers or experts) are indexed; the others are scanned (IndexOf).
  size_t indexed_children = 0, indexed_params = 0, children = 0, slots = 0, forward = 0;
  for (const Module& module : doc.modules) {
    if (module.children.size() > kScanLimit) indexed_children += module.children.size();
    if (module.params.size() > kScanLimit) indexed_params += module.params.size();
    children += module.children.size();
    slots += module.params.size();
    forward += module.forward.size();
  }
  child_index_.reserve(indexed_children);
  param_index_.reserve(indexed_params);
  for (std::vector<uint32_t>* begin : {&child_name_begin_, &slot_begin_, &forward_begin_}) {
    begin->reserve(doc.modules.size() + 1);
  }
  child_names_.reserve(children);
  slots_.reserve(slots);
  forward_.reserve(forward);
  var_keyword_.resize(doc.modules.size());
  binding_kind_.reserve(doc.modules.size());
  binding_kind_.resize(doc.modules.size());
  cached_family_.resize(doc.modules.size());
  for (ModuleId m : doc.family_modules) cached_family_[m] = doc.modules[m].family->cached.has_value();
  for (ModuleId m = 0; m < doc.modules.size(); ++m) {
    const Module& module = doc.modules[m];
    child_name_begin_.push_back(static_cast<uint32_t>(child_names_.size()));
    for (const auto& [name, child] : module.children) child_names_.push_back(name);
    slot_begin_.push_back(static_cast<uint32_t>(slots_.size()));
    slots_.insert(slots_.end(), module.params.begin(), module.params.end());
    forward_begin_.push_back(static_cast<uint32_t>(forward_.size()));
    forward_.insert(forward_.end(), module.forward.begin(), module.forward.end());
    var_keyword_[m] = module.var_keyword;
    binding_kind_[m] = module.parallel ? module.parallel->binding_kind : kNoName;
    if (module.children.size() > kScanLimit) {
      for (uint32_t i = 0; i < module.children.size(); ++i) child_index_.emplace(Key(m, module.children[i].first), i);
    }
    if (module.params.size() > kScanLimit) {
      for (uint32_t i = 0; i < module.params.size(); ++i) param_index_.emplace(Key(m, module.params[i].first), i);
    }
  }
  child_name_begin_.push_back(static_cast<uint32_t>(child_names_.size()));
  slot_begin_.push_back(static_cast<uint32_t>(slots_.size()));
  forward_begin_.push_back(static_cast<uint32_t>(forward_.size()));

  auto add_path = [&](ModuleId m, PathId parent, NameId name) {
    PathId p = static_cast<PathId>(module_.size());
    module_.push_back(m);
    parent_.push_back(parent);
    end_.push_back(0);
    name_.push_back(name);
    if (parent != kNoPath && parent != 0) {
      // Grow first, then copy the parent's FQN within the (possibly moved) arena.
      const size_t begin = fqn_offset_[parent], len = fqn_offset_[parent + 1] - begin;
      const size_t at = fqn_data_.size();
      fqn_data_.resize(at + len);
      std::memcpy(fqn_data_.data() + at, fqn_data_.data() + begin, len);
      fqn_data_ += '.';
    }
    if (parent != kNoPath) fqn_data_ += doc_.Name(name);
    fqn_offset_.push_back(fqn_data_.size());
    child_begin_.push_back(static_cast<uint32_t>(child_paths_.size()));
    child_paths_.resize(child_paths_.size() + doc_.modules[m].children.size(), kNoPath);
    if (first_path_[m] == kNoPath) {
      first_path_[m] = p;
    } else {
      shared_ = true;
    }
    return p;
  };

  // Sized once: growing them would copy each several times.
  const size_t paths = doc.tree_paths;
  for (std::vector<PathId>* v : {&module_, &parent_, &end_, &name_, &child_begin_, &child_paths_}) {
    v->reserve(paths);
  }
  fqn_offset_.reserve(paths + 1);
  fqn_data_.reserve(doc.tree_fqn_bytes);
  fqn_offset_.push_back(0);
  add_path(doc.root, kNoPath, kNoName);
  std::vector<std::pair<PathId, uint32_t>> stack = {{0, 0}};
  while (!stack.empty()) {
    auto [p, next] = stack.back();
    const Module& module = doc_.modules[module_[p]];
    if (next < module.children.size()) {
      ++stack.back().second;
      const auto& [name, child] = module.children[next];
      PathId c = add_path(child, p, name);
      child_paths_[child_begin_[p] + next] = c;
      stack.push_back({c, 0});
    } else {
      end_[p] = static_cast<PathId>(module_.size());
      stack.pop_back();
    }
  }
  ascii_ = utf8::IsAscii(fqn_data_);
}

std::string FullName(std::string_view fqn, std::string_view local) {
  std::string out;
  out.reserve(fqn.size() + 1 + local.size());
  if (!fqn.empty()) {
    out += fqn;
    out += '.';
  }
  out += local;
  return out;
}

std::string ModuleTree::FullName(ParamPath param) const {
  return shardplan::FullName(fqn(param.module), doc_.Name(param.name));
}

PathId ModuleTree::ChildNamed(PathId p, NameId name) const {
  const ModuleId m = module_[p];
  const absl::Span<const NameId> names = Packed(child_names_, child_name_begin_, m);
  const uint32_t i = IndexOf(m, names.data(), static_cast<uint32_t>(names.size()), [](NameId n) { return n; },
                             child_index_, name);
  return i == kNone ? kNoPath : child(p, i);
}

PathId ModuleTree::ChildBySegment(PathId p, std::string_view segment) const {
  const NameId name = doc_.names.Find(segment);
  return name == kNoName ? kNoPath : ChildNamed(p, name);
}

ModuleTree::ParamRef ModuleTree::ParameterOf(PathId q, NameId name) const {
  const absl::Span<const Slot> slots = params(q);
  const uint32_t i = IndexOf(module_[q], slots.data(), static_cast<uint32_t>(slots.size()),
                             [](const Slot& s) { return s.first; }, param_index_, name);
  if (i == kNone) return {};
  return {q, name, slots[i].second};
}

ModuleTree::ParamRef ModuleTree::ResolveParameter(PathId from, std::string_view local) const {
  const size_t dot = local.rfind('.');
  if (dot == 0) return {};
  const PathId q = dot == std::string_view::npos ? from : ResolveFrom(from, local.substr(0, dot));
  if (q == kNoPath) return {};
  const NameId name = doc_.names.Find(dot == std::string_view::npos ? local : local.substr(dot + 1));
  if (name == kNoName) return {};
  return ParameterOf(q, name);
}

PathId ModuleTree::ResolveFrom(PathId from, std::string_view relative) const {
  if (relative.empty()) return from;
  PathId p = from;
  while (true) {
    size_t dot = relative.find('.');
    p = ChildBySegment(p, relative.substr(0, dot));
    if (p == kNoPath || dot == std::string_view::npos) return p;
    relative.remove_prefix(dot + 1);
  }
}

ModuleTree::ParamRef ModuleTree::Resolver::ResolveParameter(PathId from, NameId local) {
  if (!tree_.in_order_resolution_) return tree_.ResolveParameter(from, tree_.doc_.Name(local));
  Split& split = splits_[local % std::size(splits_)];
  if (split.local != local) {
    const std::string_view text = tree_.doc_.Name(local);
    split.local = local;
    split.leading_dot = !text.empty() && text.front() == '.';
    split.names.clear();
    if (text.find('.') == std::string_view::npos) {
      split.names.push_back(local);  // the slot's name itself
    } else if (!split.leading_dot) {
      // A part that is no name (kNoName) is no child or slot either.
      for (size_t begin = 0;;) {
        const size_t dot = text.find('.', begin);
        split.names.push_back(tree_.doc_.names.Find(text.substr(begin, dot - begin)));
        if (dot == std::string_view::npos) break;
        begin = dot + 1;
      }
    }
  }
  if (split.leading_dot) return tree_.ResolveParameter(from, tree_.doc_.Name(local));
  PathId q = from;
  for (size_t i = 0; i + 1 < split.names.size() && q != kNoPath; ++i) q = tree_.ChildNamed(q, split.names[i]);
  return q == kNoPath ? ParamRef{} : tree_.ParameterOf(q, split.names.back());
}

PathId ModuleTree::Resolver::ResolveAfterMiss(PathId after, std::string_view fqn) {
  if (fqn.empty()) return 0;
  // Child names are unique, non-empty and without dots, so a path whose FQN
  // is spelled like `fqn` is the path it names. The path after the last
  // one's subtree (its next sibling, or the subtree that follows) came
  // first (Resolve); the next few follow when a list skips some.
  for (PathId p = after + 1; p < std::min<PathId>(tree_.size(), after + kPathsCompared); ++p) {
    if (SameText(tree_.fqn(p), fqn)) return last_ = p;
  }
  // Otherwise, from the last path's deepest ancestor-or-self whose FQN is
  // a whole leading segment of fqn, remembering its child on the way to
  // the last path: a list of siblings names that child's next sibling.
  const size_t common = CommonPrefix(fqn, tree_.fqn(last_));
  PathId p = last_, previous = kNoPath;
  size_t length = tree_.fqn(p).size();
  while (p != 0 && !(length <= common && (length == fqn.size() || fqn[length] == '.'))) {
    previous = p;
    p = tree_.parent(p);
    length = tree_.fqn(p).size();
  }
  if (length == fqn.size()) return last_ = p;
  size_t pos = p == 0 ? 0 : length + 1;
  last_ = p;
  while (true) {
    const size_t dot = fqn.find('.', pos);
    const size_t end = dot == std::string_view::npos ? fqn.size() : dot;
    const std::string_view segment = fqn.substr(pos, end - pos);
    // The children after `previous`, else from p's first child, a few of
    // them, are compared before the name is hashed: a list in path order
    // that skips some siblings finds each within a few steps.
    PathId next = previous == kNoPath ? p + 1 : tree_.end(previous);
    previous = kNoPath;
    PathId child = kNoPath;
    for (int k = 0; k < kSiblingsCompared && next < tree_.size() && tree_.parent(next) == p; ++k) {
      if (tree_.RelativeName(p, next) == segment) {
        child = next;
        break;
      }
      next = tree_.end(next);
    }
    p = child != kNoPath ? child : tree_.ChildBySegment(p, segment);
    if (p == kNoPath) return kNoPath;
    last_ = p;
    if (dot == std::string_view::npos) return p;
    pos = dot + 1;
  }
}

}  // namespace shardplan

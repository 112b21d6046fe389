#include "core/model/nearest.h"

#include <vector>

#include "core/text/glob.h"
#include "core/text/suggest.h"

namespace shardplan {
namespace {

// Follows the dot-separated `segments` down from `p`, each to the child of
// that name or else to the nearest child name, appending the names taken to
// `name`. kNoPath when a segment has no child near enough; `changed` says
// whether some segment was replaced.
PathId Follow(const ModuleTree& tree, PathId p, std::string_view segments, std::string& name, bool& changed) {
  const Document& doc = tree.doc();
  while (!segments.empty()) {
    const size_t dot = segments.find('.');
    const std::string_view segment = segments.substr(0, dot);
    NearestName near(segment);
    PathId next = kNoPath;
    for (PathId c = p + 1; c < tree.end(p) && next == kNoPath; c = tree.end(c)) {
      if (doc.Name(tree.name(c)) == segment) next = c;
    }
    if (next == kNoPath) {
      for (PathId c = p + 1; c < tree.end(p); c = tree.end(c)) near.Consider(doc.Name(tree.name(c)));
      if (!near.best()) return kNoPath;
      for (PathId c = p + 1; c < tree.end(p) && next == kNoPath; c = tree.end(c)) {
        if (doc.Name(tree.name(c)) == *near.best()) next = c;
      }
      changed = true;
    }
    if (!name.empty()) name += '.';
    name += doc.Name(tree.name(next));
    p = next;
    segments = dot == std::string_view::npos ? std::string_view() : segments.substr(dot + 1);
  }
  return p;
}

constexpr size_t kMaxPatternPaths = 65'536;

bool HasWildcard(std::string_view segment) { return segment.find_first_of("*?[") != std::string_view::npos; }

}  // namespace

std::optional<std::string> NearestPattern(const ModuleTree& tree, std::string_view pattern, bool params) {
  const Document& doc = tree.doc();
  std::vector<PathId> at = {0};  // the modules the segments so far match
  std::string nearest;
  bool changed = false;
  for (std::string_view rest = pattern;;) {
    const size_t dot = rest.find('.');
    const std::string_view segment = rest.substr(0, dot);
    const bool last = dot == std::string_view::npos;
    const bool slots = last && params;  // the segment may name a parameter slot
    // Calls visit(name, path) for each child of the modules in `at`, and
    // with `slots` visit(name, kNoPath) for each of their parameter slots.
    auto each = [&](auto&& visit) {
      for (PathId p : at) {
        for (PathId c = p + 1; c < tree.end(p); c = tree.end(c)) visit(doc.Name(tree.name(c)), c);
        if (!slots) continue;
        for (const auto& [name, param] : tree.params(p)) visit(doc.Name(name), kNoPath);
      }
    };
    std::string_view taken = segment;
    bool found = false;
    std::vector<PathId> next;
    const Glob glob(segment);
    auto collect = [&](std::string_view name, PathId c) {
      if (!glob.Matches(name)) return;
      found = true;
      if (c != kNoPath) next.push_back(c);
    };
    each(collect);
    if (!found && !HasWildcard(segment)) {
      NearestName near(segment);
      each([&](std::string_view name, PathId) { near.Consider(name); });
      if (!near.best()) return std::nullopt;
      taken = *near.best();
      changed = true;
      each([&](std::string_view name, PathId c) {
        if (name != taken) return;
        found = true;
        if (c != kNoPath) next.push_back(c);
      });
    }
    if (!found || next.size() > kMaxPatternPaths) return std::nullopt;
    if (rest.data() != pattern.data()) nearest += '.';
    nearest += taken;
    if (last) break;
    at = std::move(next);
    rest = rest.substr(dot + 1);
  }
  if (!changed) return std::nullopt;
  return nearest;
}

std::optional<std::string> NearestModule(const ModuleTree& tree, PathId from, std::string_view relative) {
  std::string name;
  bool changed = false;
  if (Follow(tree, from, relative, name, changed) == kNoPath || !changed) return std::nullopt;
  return name;
}

std::optional<std::string> NearestParameter(const ModuleTree& tree, PathId from, std::string_view local) {
  const size_t dot = local.rfind('.');
  std::string name;
  bool changed = false;
  const PathId module =
      dot == std::string_view::npos ? from : Follow(tree, from, local.substr(0, dot), name, changed);
  if (module == kNoPath) return std::nullopt;
  const std::string_view slot = dot == std::string_view::npos ? local : local.substr(dot + 1);
  const Document& doc = tree.doc();
  NearestName near(slot);
  bool found = false;
  for (const auto& [slot_name, param] : tree.params(module)) {
    found = found || doc.Name(slot_name) == slot;
    near.Consider(doc.Name(slot_name));
  }
  if (!found && !near.best()) return std::nullopt;
  changed = changed || !found;
  if (!changed) return std::nullopt;
  if (!name.empty()) name += '.';
  name += found ? slot : *near.best();
  return name;
}

}  // namespace shardplan

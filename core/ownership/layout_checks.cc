#include "core/ownership/layout_checks.h"

#include <algorithm>
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/sink.h"
#include "core/model/name_set.h"
#include "core/exec/parallel.h"
#include "core/text/json_pointer.h"

namespace shardplan {
void CheckPorts(const ModuleTree& tree, PathId path, const Layout& layout, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const std::string_view fqn = tree.fqn(path);
  auto origin = [&] { return doc.PointerOf(layout.origin); };
  if (layout.legacy_field() != kNoName) {
    sink.Report(Code::kLegacyInjection, {.fqn = fqn, .pointer = absl::StrCat(origin(), "/", doc.Name(layout.legacy_field()))});
  }
  if (!layout.params() || !layout.in_src() || !layout.in_dst()) {
    sink.Report(Code::kPortsMissing, {.fqn = fqn, .pointer = origin()});
  }
  if (layout.in_src() && layout.in_dst()) {
    bool same = layout.in_src()->size() == layout.in_dst()->size();
    if (same && layout.in_src().get() != layout.in_dst().get()) {
      const NameSet dst(*layout.in_dst(), [](const PlacementEntry& e) { return e.name; });
      for (const PlacementEntry& e : *layout.in_src()) same = same && dst.Contains(e.name);
    }
    if (!same) sink.Report(Code::kPortsMismatch, {.fqn = fqn, .pointer = absl::StrCat(origin(), "/in_dst")});
  }
  if (layout.in_src() && !tree.var_keyword(path)) {
    // A module's few forward names are scanned where they are, as a
    // NameSet would scan its copy of them; a set is built for many.
    const absl::Span<const NameId> names = tree.forward(path);
    const bool many = names.size() > NameSet::kSmall;
    const NameSet forward = many ? NameSet(names, [](NameId n) { return n; }) : NameSet();
    auto is_forward = [&](NameId n) {
      return many ? forward.Contains(n) : std::find(names.begin(), names.end(), n) != names.end();
    };
    std::vector<std::string_view> unknown;
    for (const PlacementEntry& e : *layout.in_src()) {
      if (!is_forward(e.name)) {
        unknown.push_back(doc.Name(e.name));
      }
    }
    if (!unknown.empty()) {
      std::sort(unknown.begin(), unknown.end());
      sink.Report(Code::kUnknownForwardInput,
                  {.fqn = fqn, .pointer = absl::StrCat(origin(), "/in_src/", JsonPointerToken(unknown.front()))}, unknown);
    }
  }
  if (layout.out_names()) {
    const SmallVector<NameId>& names = *layout.out_names();
    NameSet seen;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!seen.Insert(names[i])) {
        sink.Report(Code::kDuplicateOutputName, {.fqn = fqn, .pointer = absl::StrCat(origin(), "/out_names/", i)});
        break;
      }
    }
  }
}

void CheckPlacements(const ModuleTree& tree, PathId path, const Layout& layout, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const std::string_view fqn = tree.fqn(path);
  NameSet reported;
  const std::pair<std::string_view, const MapRef*> maps[] = {
      {"params", &layout.params()},   {"in_src", &layout.in_src()}, {"in_dst", &layout.in_dst()},
      {"out_src", &layout.out_src()}, {"out_dst", &layout.out_dst()},
  };
  for (const auto& [key, map] : maps) {
    if (!*map) continue;
    for (const PlacementEntry& e : **map) {
      for (const AxisPlacement& a : e.placements) {
        if (doc.IsMeshAxis(a.axis) || !reported.Insert(a.axis)) continue;
        const std::string pointer = absl::StrCat(doc.PointerOf(layout.origin), "/", key, "/",
                                                 JsonPointerToken(doc.Name(e.name)), "/", JsonPointerToken(doc.Name(a.axis)));
        const std::optional<std::string> parameter =
            key == "params" ? std::optional(FullName(fqn, doc.Name(e.name))) : std::nullopt;
        sink.Report(Code::kUnknownAxis, {.fqn = fqn, .parameter = parameter, .pointer = pointer}, doc.Name(a.axis));
      }
    }
  }
  if (!layout.params()) return;
  for (const PlacementEntry& e : *layout.params()) {
    const bool partial = std::any_of(e.placements.begin(), e.placements.end(),
                                     [](const AxisPlacement& a) { return a.placement.is_partial(); });
    if (!partial) continue;
    sink.Report(Code::kPartialParameter,
                {.fqn = fqn,
                 .parameter = FullName(fqn, doc.Name(e.name)),
                 .pointer = absl::StrCat(doc.PointerOf(layout.origin), "/params/", JsonPointerToken(doc.Name(e.name)))});
  }
}

void CheckParallelAxes(const ModuleTree& tree, PathId path, const ParallelSpec& parallel, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  NameSet reported;
  for (size_t i = 0; i < parallel.axes.size(); ++i) {
    const NameId axis = parallel.axes[i];
    if (doc.IsMeshAxis(axis) || !reported.Insert(axis)) continue;
    sink.Report(Code::kParallelUnknownAxis,
                {.fqn = tree.fqn(path), .pointer = absl::StrCat(doc.PointerOf(parallel.origin), "/axes/", i)},
                doc.Name(axis));
  }
}

const CleanLayouts::Facts& CleanLayouts::Of(const PlacementMap& map) {
  for (const Facts& facts : facts_) {
    if (facts.map == &map) return facts;
  }
  Facts& facts = facts_[next_++ % std::size(facts_)];
  facts = {&map, true, false};
  for (const PlacementEntry& e : map) {
    for (const AxisPlacement& a : e.placements) {
      facts.mesh_axes_only = facts.mesh_axes_only && doc_.IsMeshAxis(a.axis);
      facts.partial = facts.partial || a.placement.is_partial();
    }
  }
  return facts;
}

bool CleanLayouts::CheckedPlacements(const std::array<const PlacementMap*, 5>& maps) {
  if (maps[0] != nullptr && (!Of(*maps[0]).mesh_axes_only || Of(*maps[0]).partial)) return false;
  for (size_t i = 1; i < maps.size(); ++i) {
    if (maps[i] != nullptr && !Of(*maps[i]).mesh_axes_only) return false;
  }
  clean_maps_ = maps;
  return true;
}

bool CleanLayouts::CheckedPorts(const ModuleTree& tree, PathId path, const Layout& layout) {
  DiagnosticSink found;
  CheckPorts(tree, path, layout, found);
  if (found.has_errors()) return false;
  if (Plain(layout)) {
    const bool var_keyword = tree.var_keyword(path);
    const absl::Span<const NameId> forward = var_keyword ? absl::Span<const NameId>() : tree.forward(path);
    clean_ports_ = {layout.in_src().get(), layout.in_dst().get(), var_keyword, {forward.begin(), forward.end()}};
  }
  return true;
}

bool CleanLayouts::CheckedParallelAxes(const ParallelSpec& parallel) {
  if (!(clean_axes_ && SameNames(*clean_axes_, parallel.axes))) {
    if (!doc_.OnMeshAxes(parallel)) return false;
    clean_axes_ = parallel.axes;
  }
  clean_spec_ = &parallel;
  return true;
}

void CheckOwners(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink) {
  const absl::Span<const Owner> entries = owners.InOrder();
  // Chunks of owners in parallel, each with its diagnostics in owner order,
  // appended in chunk order. Nearly every owner is clean: nothing to pass on
  // owner by owner, and nothing left to do on one thread.
  constexpr size_t kChunk = 1024;
  std::vector<DiagnosticSink> found(ChunkCount(entries.size(), kChunk));
  ParallelChunks(0, entries.size(), kChunk, [&](size_t c, size_t first, size_t stop) {
    CleanLayouts screen(tree.doc());
    DiagnosticSink& own = found[c];
    for (size_t e = first; e < stop; ++e) {
      const Owner& owner = entries[e];
      // Derived out_names are unique, so the written ones are all there
      // is to check for duplicate-output-name.
      if (!screen.Ports(tree, owner.path, *owner.layout)) CheckPorts(tree, owner.path, *owner.layout, own);
      if (!screen.Placements(*owner.layout)) CheckPlacements(tree, owner.path, *owner.layout, own);
      if (owner.parallel && !tree.cached_family(owner.path)) {
        // A model provider's spec is its module's: the tree knows it.
        const bool on_mesh = owner.parallel == tree.parallel(owner.path) ? tree.parallel_on_mesh(owner.path)
                                                                         : screen.ParallelAxes(*owner.parallel);
        if (!on_mesh) CheckParallelAxes(tree, owner.path, *owner.parallel, own);
      }
    }
  });
  for (DiagnosticSink& f : found) sink.Append(std::move(f));
}

}  // namespace shardplan

#include "core/ownership/owner_layout.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/fixes.h"
#include "core/diagnostics/sink.h"
#include "core/model/name_set.h"
#include "core/text/json_pointer.h"
#include "core/text/suggest.h"

namespace shardplan {
namespace {

// Help for an axis the mesh does not have: the nearest mesh axis (`nearest`,
// when one is near) and the mesh's axes.
std::string UnknownAxisHelp(const Document& doc, const std::optional<std::string_view>& nearest) {
  std::vector<std::string_view> axes;
  for (const MeshAxis& m : doc.mesh) axes.push_back(doc.Name(m.name));
  const std::string mesh = axes.empty() ? "the mesh has no axis" : absl::StrCat("the mesh's axes are ", QuotedList(axes));
  return nearest ? absl::StrCat(DidYouMean(*nearest), " (", mesh, ")") : mesh;
}

std::optional<std::string_view> NearestMeshAxis(const Document& doc, NameId axis) {
  NearestName near(doc.Name(axis));
  for (const MeshAxis& m : doc.mesh) near.Consider(doc.Name(m.name));
  return near.best();
}

// The fix-it of inputs the forward does not take (`unknown`): each one's
// nearest forward name the layout does not declare yet, renamed in in_src
// and in_dst.
std::shared_ptr<const FixIt> UnknownInputsFixIt(const ModuleTree& tree, PathId path, const Layout& layout,
                                                const std::vector<std::string_view>& unknown) {
  const Document& doc = tree.doc();
  const NameSet declared(*layout.in_src(), [](const PlacementEntry& e) { return e.name; });
  std::vector<std::string_view> forward, candidates;
  for (NameId n : tree.forward(path)) {
    forward.push_back(doc.Name(n));
    if (!declared.Contains(n)) candidates.push_back(doc.Name(n));
  }
  const std::string listing =
      forward.empty() ? "the forward takes no input" : absl::StrCat("the forward takes ", QuotedList(forward));
  return RenameUnknownFixIt(unknown, candidates, listing, [&](std::string_view name) {
    return KeyPointers(doc, layout, {"in_src", "in_dst"}, name);
  });
}

}  // namespace

std::vector<std::string> KeyPointers(const Document& doc, const Layout& layout,
                                     std::initializer_list<std::string_view> ports, std::string_view name) {
  std::vector<std::string> out;
  for (std::string_view port : ports) {
    const MapRef& map = port == "in_src"    ? layout.in_src()
                        : port == "in_dst"  ? layout.in_dst()
                        : port == "out_src" ? layout.out_src()
                                            : layout.out_dst();
    if (map && std::any_of(map->begin(), map->end(), [&](const PlacementEntry& e) { return doc.Name(e.name) == name; })) {
      out.push_back(absl::StrCat(doc.PointerOf(layout.origin), "/", port, "/", JsonPointerToken(name)));
    }
  }
  return out;
}

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
    const NameSet forward(tree.forward(path), [](NameId n) { return n; });
    std::vector<std::string_view> unknown;
    for (const PlacementEntry& e : *layout.in_src()) {
      if (!forward.Contains(e.name)) unknown.push_back(doc.Name(e.name));
    }
    if (!unknown.empty()) {
      std::sort(unknown.begin(), unknown.end());
      sink.Report(Code::kUnknownForwardInput,
                  {.fqn = fqn,
                   .pointer = absl::StrCat(origin(), "/in_src/", JsonPointerToken(unknown.front())),
                   .fix_it = UnknownInputsFixIt(tree, path, layout, unknown)},
                  unknown);
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
        auto pointer_of = [&](std::string_view map, NameId entry, std::string_view axis) {
          return absl::StrCat(doc.PointerOf(layout.origin), "/", map, "/", JsonPointerToken(doc.Name(entry)), "/",
                              JsonPointerToken(axis));
        };
        const std::string pointer = pointer_of(key, e.name, doc.Name(a.axis));
        const std::optional<std::string> parameter =
            key == "params" ? std::optional(FullName(fqn, doc.Name(e.name))) : std::nullopt;
        const std::optional<std::string_view> nearest = NearestMeshAxis(doc, a.axis);
        // The fix renames the axis in every entry of the layout that places
        // on it, unless one of them places on the nearest axis too.
        std::vector<FixOperation> fix;
        bool clash = false;
        for (const auto& [other_key, other_map] : maps) {
          if (!nearest || !*other_map) continue;
          for (const PlacementEntry& o : **other_map) {
            bool has_axis = false, has_nearest = false;
            for (const AxisPlacement& p : o.placements) {
              has_axis = has_axis || p.axis == a.axis;
              has_nearest = has_nearest || doc.Name(p.axis) == *nearest;
            }
            if (!has_axis) continue;
            clash = clash || has_nearest;
            fix.push_back(RenameMember(pointer_of(other_key, o.name, doc.Name(a.axis)), *nearest));
          }
        }
        if (clash) fix.clear();
        sink.Report(Code::kUnknownAxis,
                    {.fqn = fqn,
                     .parameter = parameter,
                     .pointer = pointer,
                     .fix_it = MakeFixIt(UnknownAxisHelp(doc, nearest), std::move(fix))},
                    doc.Name(a.axis));
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
                 .pointer = doc.DeclarationPointerOf(layout.origin, doc.Name(e.name))});
  }
}

void CheckParallelAxes(const ModuleTree& tree, PathId path, const ParallelSpec& parallel, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  NameSet reported;
  for (size_t i = 0; i < parallel.axes.size(); ++i) {
    const NameId axis = parallel.axes[i];
    if (doc.IsMeshAxis(axis) || !reported.Insert(axis)) continue;
    const std::string pointer = absl::StrCat(doc.PointerOf(parallel.origin), "/axes/", i);
    const std::optional<std::string_view> nearest = NearestMeshAxis(doc, axis);
    // Replacing the name, unless the spec names the nearest axis already.
    std::vector<FixOperation> fix;
    if (nearest && std::none_of(parallel.axes.begin(), parallel.axes.end(),
                                [&](NameId other) { return doc.Name(other) == *nearest; })) {
      fix.push_back(ReplaceWithString(pointer, *nearest));
    }
    sink.Report(Code::kParallelUnknownAxis,
                {.fqn = tree.fqn(path), .pointer = pointer, .fix_it = MakeFixIt(UnknownAxisHelp(doc, nearest), std::move(fix))},
                doc.Name(axis));
  }
}

}  // namespace shardplan

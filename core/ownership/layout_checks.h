// Checks of one owner's layout (spec section 4 step 5), shared by collection
// and by the final-plan checks of section 6.
#ifndef SHARDPLAN_CORE_OWNERSHIP_LAYOUT_CHECKS_H_
#define SHARDPLAN_CORE_OWNERSHIP_LAYOUT_CHECKS_H_

#include <array>
#include <optional>

#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/model/name_set.h"
#include "core/ownership/owners.h"

namespace shardplan {

// Verifies, for the layout of the module at `path`: - no legacy compute
// injection (legacy-injection); - params, in_src and in_dst present
// (ports-missing); - in_src and in_dst name the same inputs (ports-mismatch);
// - every input is a forward parameter, unless forward takes **kwargs
// (unknown-forward-input); - out_names has no repeat (duplicate-output-name).
void CheckPorts(const ModuleTree& tree, PathId path, const Layout& layout, DiagnosticSink& sink);

// Verifies: - every axis of every named placement (params, in_src, in_dst,
// out_src, out_dst, in that order) is a mesh axis (unknown-axis, once per
// axis); then - no parameter placement is Partial (partial-parameter).
void CheckPlacements(const ModuleTree& tree, PathId path, const Layout& layout, DiagnosticSink& sink);

// Verifies that every communication axis is a mesh axis (parallel-unknown-axis).
void CheckParallelAxes(const ModuleTree& tree, PathId path, const ParallelSpec& parallel, DiagnosticSink& sink);

// Which layouts and parallel specs the checks above have nothing to report
// for, found without spelling a diagnostic: what the maps of a layout hold
// is remembered per stored map (a model's millions of layouts share a few,
// see MapStore), and the last clean ports and list of parallel axes are
// kept. Not thread-safe: one per task. Callers run the full check only where
// this says no.
class CleanLayouts {
 public:
  explicit CleanLayouts(const Document& doc) : doc_(doc) {}
  // CheckPorts reports nothing for `layout` at `path`: the input ports and
  // forward names of the last clean layout are kept, as owner after owner
  // shares them (so the remembered case is inline).
  bool Ports(const ModuleTree& tree, PathId path, const Layout& layout) {
    return (Plain(layout) && clean_ports_.in_src != nullptr && layout.in_src().get() == clean_ports_.in_src &&
            layout.in_dst().get() == clean_ports_.in_dst && tree.var_keyword(path) == clean_ports_.var_keyword &&
            (clean_ports_.var_keyword || SameNames(tree.forward(path), clean_ports_.forward))) ||
           CheckedPorts(tree, path, layout);
  }
  // CheckPlacements reports nothing for `layout`.
  bool Placements(const Layout& layout) {
    const std::array<const PlacementMap*, 5> maps = {layout.params().get(), layout.in_src().get(), layout.in_dst().get(),
                                                     layout.out_src().get(), layout.out_dst().get()};
    return maps == clean_maps_ || CheckedPlacements(maps);
  }
  // CheckParallelAxes reports nothing for `parallel`: the last clean spec
  // is remembered, and its axes, as a native request's owners share its
  // spec (so that case is inline) and specs repeat the same axes.
  bool ParallelAxes(const ParallelSpec& parallel) {
    return &parallel == clean_spec_ || CheckedParallelAxes(parallel);
  }

 private:
  struct Facts {
    const PlacementMap* map = nullptr;
    bool mesh_axes_only = false;  // every axis is a mesh axis
    bool partial = false;         // some placement is Partial
  };
  const Facts& Of(const PlacementMap& map);
  // The remembered ports stand for layouts with nothing else to check:
  // legacy fields, absent params and repeated out_names are checked anew.
  static bool Plain(const Layout& layout) {
    return layout.legacy_field() == kNoName && layout.params() && (!layout.out_names() || layout.out_names()->size() <= 1);
  }
  // Ports, Placements and ParallelAxes past the remembered case: each
  // remembers what it finds clean.
  bool CheckedPorts(const ModuleTree& tree, PathId path, const Layout& layout);
  bool CheckedPlacements(const std::array<const PlacementMap*, 5>& maps);
  bool CheckedParallelAxes(const ParallelSpec& parallel);

  const Document& doc_;
  Facts facts_[8];  // the maps seen last
  size_t next_ = 0;  // the slot to fill next
  // The maps (params, in_src, in_dst, out_src, out_dst) of the last clean
  // layout: consecutive owners usually share all five.
  std::array<const PlacementMap*, 5> clean_maps_ = {};
  // The last clean parallel spec, and its axes.
  const ParallelSpec* clean_spec_ = nullptr;
  std::optional<SmallVector<NameId>> clean_axes_;
  struct CleanPorts {
    const PlacementMap* in_src = nullptr;
    const PlacementMap* in_dst = nullptr;
    bool var_keyword = false;
    SmallVector<NameId> forward;  // empty with var_keyword
  };
  CleanPorts clean_ports_;
};

// Section 4 step 5 for every owner, in entry order (checked in parallel,
// reported in order).
void CheckOwners(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_LAYOUT_CHECKS_H_

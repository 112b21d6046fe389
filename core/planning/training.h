// Training memory per device and the verdict against the device's memory
// (training-v1; docs/planning.md section "Training memory").
//
// For every device: the model states of every parameter identity (params,
// grads, master copy, optimizer states; ZeRO stages over `shard_axes` with
// FSDP2's padded dim-0 shards on top of the plan's own sharding), the
// gathered parameters and gradients of the largest FSDP unit (zero 3), and
// the activations (activations.h), which are the same on every device.
//
// Every figure is exact: the parser and the builder refuse documents whose
// training memory could exceed 2^63 - 1 bytes on a device. Per-device
// totals are sums over groups of parameters (device_sums.h), never devices
// x parameters; the gathered bytes cost devices x FSDP units.
#ifndef SHARDPLAN_CORE_PLANNING_TRAINING_H_
#define SHARDPLAN_CORE_PLANNING_TRAINING_H_

#include <optional>
#include <vector>

#include "core/diagnostics/sink.h"
#include "core/memory_report.h"
#include "core/model/module_tree.h"
#include "core/model/placement.h"

namespace shardplan {

// For a document with a `training` section: reports each `frozen` and
// `fsdp_units` pattern that matches nothing (training-pattern-no-match);
// then, when `memory` holds the parameter memory of the plan whose
// placements `placement_of_param` gives (as ComputeMemory takes them), sets
// memory->training and reports the verdict (exceeds-device-memory,
// near-device-memory) with the single changes that would fit.
void CheckTraining(const ModuleTree& tree, const std::vector<const NamedPlacements*>& placement_of_param,
                   std::optional<MemoryReport>& memory, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_TRAINING_H_

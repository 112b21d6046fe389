// What the engine found about a document, behind a Result (core/result.h):
// the document and its module tree, which everything else names into, the
// owners as collected, what a passing ownership check found and the plan
// Plan() made. Internal to core and its tests.
#ifndef SHARDPLAN_CORE_OUTCOME_H_
#define SHARDPLAN_CORE_OUTCOME_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/memory_report.h"
#include "core/model/document.h"
#include "core/model/module_tree.h"
#include "core/ownership/claims.h"
#include "core/ownership/owners.h"
#include "core/planning/communication.h"

namespace shardplan {

// What a passing ownership check adds to the owners (spec section 8's
// `owned`, with Outcome::owners and Outcome::declared).
struct Owned {
  // Per parameter id: whether an owner claims it.
  std::vector<bool> owned;
  std::vector<ParamId> expected;  // ascending
  // Per parameter id: the slot of its canonical full name (the first
  // claimant's, Claims::canonical), set where owned[p] is.
  std::vector<ModuleTree::ParamPath> canonical;
  // [canonical, alias] pairs, in named_parameters(root) order.
  std::vector<std::pair<std::string, std::string>> aliases;
};

// The plan `shardplan plan` made (planner-v1 section 3).
struct PlanOutput {
  std::vector<FqnLayout> entries;                    // plan order
  std::vector<std::vector<std::string>> provenance;  // per entry
  std::optional<MemoryReport> memory;                // nullopt: too many devices
  CommunicationReport communication;
};

struct Outcome {
  // The worker threads the engine ran with (CheckOptions::threads): the
  // result is written with as many.
  int threads = 0;
  std::shared_ptr<const Document> document;
  std::unique_ptr<const ModuleTree> tree;
  // The owners as collected (spec section 4 steps 1-4), in entry order,
  // kept whether or not the checks after collection passed, and what claims
  // made of their params. An owner's layout as the result prints it is the
  // document's layout less the params claims dropped, with normalized
  // out_names.
  std::vector<Owner> owners;
  Declarations declared;
  std::optional<Owned> owned;         // when ownership passed
  std::optional<PlanOutput> planned;  // when Plan() made a plan
  // The memory of a document's own plan with its training figures: set by
  // check on a passing document with a `plan` and a `training` section.
  std::optional<MemoryReport> checked_memory;
};

// The parameter slots whose parameter an owner claims, in
// named_parameters(root) order (tied parameters once per slot): the owned
// names of the result.
std::vector<ModuleTree::ParamPath> OwnedSlots(const Outcome& outcome);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OUTCOME_H_

// The result of checking one document (spec section 8).
#ifndef SHARDPLAN_CORE_RESULT_H_
#define SHARDPLAN_CORE_RESULT_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ownership/claims.h"
#include "core/planning/communication.h"
#include "core/diagnostic.h"
#include "core/planning/memory.h"
#include "core/model/document.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"

namespace shardplan {

struct Owned {
  // The owners as collected, in entry order (their FQNs: the result's tree
  // at their paths). An owner's layout as the result prints it is the
  // document's layout less the params claims dropped, with normalized
  // out_names.
  std::vector<Owner> entries;
  Declarations declared;  // what claims made of the owners' params
  // Every owned parameter name, in named_parameters(root) order (see
  // OwnedNames for the sorted spellings).
  OwnedParams owned_params;
  std::vector<ParamId> expected;
  std::vector<std::pair<std::string, std::string>> aliases;
};

// The plan `shardplan plan` made (planner-v1 section 3).
struct PlanOutput {
  std::vector<FqnLayout> entries;                    // plan order
  std::vector<std::vector<std::string>> provenance;  // per entry
  std::optional<MemoryReport> memory;                // nullopt: too many devices
  CommunicationReport communication;
};

struct Result {
  bool ok = false;
  std::vector<Diagnostic> diagnostics;
  // The parsed document and its module tree, which the owned result names
  // into; null when the document is invalid.
  std::shared_ptr<const Document> document;
  std::shared_ptr<const ModuleTree> tree;
  std::optional<Owned> owned;  // present when ok
  // Present after Plan() when ownership succeeded.
  std::optional<PlanOutput> planned;
};

// The result as compact JSON (schema shardplan.result.v1): the same input
// always gives the same bytes. Layouts print params, in_src and in_dst always
// (null when null), out_src, out_dst and out_names only when non-null;
// `expected` and `required` list parameter ids sorted, `owned_names` sorted.
// A planned result adds "plan": {"modules": {FQN: layout}}, "provenance":
// {FQN: [...]}, "memory" (null beyond kMaxMemoryDevices), "communication"
// (records) and "collectives" ({collective: {axis: count}}).
std::string ResultToJson(const Result& result);

// The full names of the owned parameters, sorted (empty unless ok).
std::vector<std::string> OwnedNames(const Result& result);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_RESULT_H_

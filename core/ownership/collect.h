// Collecting owners (collect_owned_layouts, spec section 4 steps 1-4).
#ifndef SHARDPLAN_CORE_OWNERSHIP_COLLECT_H_
#define SHARDPLAN_CORE_OWNERSHIP_COLLECT_H_

#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"

namespace shardplan {

// Verifies and adds, in this order: - model providers, in document order
// (unknown-module, multiple-owners); - families with a sharding, by their
// module's first path, replacing a model provider of the same module
// (parallel-member-undeclared); - native requests, in document order, each
// pattern's hits in named_modules order (native-no-match,
// native-overlaps-family, multiple-owners). Every add normalizes the
// layout's outputs (unknown-output). A failed add adds nothing, except that
// an entry whose only fault is its outputs or its undeclared member protocol
// is kept, so that its claims are still checked. Returns false when an owner
// the document asks for was not added (unknown module, second owner,
// unmatched or overlapping native request).
bool CollectOwners(const ModuleTree& tree, Owners& owners, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_COLLECT_H_

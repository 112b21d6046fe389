// Collecting owners (collect_owned_layouts, spec section 4 steps 1-4).
#ifndef SHARDPLAN_CORE_OWNERSHIP_COLLECT_H_
#define SHARDPLAN_CORE_OWNERSHIP_COLLECT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"

namespace shardplan {

// Verifies and adds, in this order: - model providers (unknown-module,
// multiple-owners); - families with a sharding, replacing a model provider of
// the same module (parallel-member-undeclared); - native requests
// (native-no-match, native-overlaps-family, multiple-owners). Every add
// normalizes the layout's outputs (unknown-output). A failed add adds nothing,
// except that an entry whose only fault is its outputs or its undeclared
// member protocol is kept, so that its claims are still checked. Returns
// false when an owner the document asks for was not added (unknown module,
// second owner, unmatched or overlapping native request).
bool CollectOwners(const ModuleTree& tree, Owners& owners, DiagnosticSink& sink);

// Per owner of `owners` (entries CollectOwners added from `tree`'s
// document): for a native request's owner, the index in the request's
// `match` of the pattern that added it; kNotNative for any other owner.
// That pattern is the first of the request's that matches the owner's FQN:
// CollectOwners adds a module at the request's first hit of it, patterns in
// order and each pattern's hits in path order, so no earlier pattern hits
// the path it adds the module at. Matches only the native owners' FQNs.
inline constexpr uint32_t kNotNative = UINT32_MAX;
std::vector<uint32_t> NativePatterns(const ModuleTree& tree, absl::Span<const Owner> owners);

// Verifies that no communicating owner (parallel spec with binding_kind other
// than "none") lies inside another of the same kind, or of kind "mesh"
// (overlapping-communication), reported per (inner, outer) pair in the
// reference's loop order. Linear in the owners' depth, not quadratic.
void CheckNesting(const ModuleTree& tree, const Owners& owners, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_COLLECT_H_

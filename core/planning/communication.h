// Communication implied by a final plan (planner spec section 6): for every
// plan entry, each port and each mesh axis where the source and destination
// placements differ, the collective that turns one into the other.
#ifndef SHARDPLAN_CORE_PLANNING_COMMUNICATION_H_
#define SHARDPLAN_CORE_PLANNING_COMMUNICATION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/document.h"
#include "core/model/interner.h"
#include "core/model/placement.h"

namespace shardplan {

// The spec's table, then two values for the transitions it does not name.
// The enum order is the order of CommunicationReport::counts.
enum class Collective : uint8_t {
  kAllGather,      // S(i) -> R
  kSlice,          // R -> S(i): each device keeps its slice, no communication
  kAllReduce,      // P(op) -> R, any op
  kReduceScatter,  // P(op) -> S(i), any op
  kAllToAll,       // S(i) -> S(j), i != j as written (ports have no rank,
                   // so S(-1) -> S(1) counts even if it is the same dim)
  // R -> P(op): no communication: a replicated value becomes partial locally
  // (for a sum, one replica keeps it and the others zero theirs).
  kNone,
  // S(i) -> P(op) and P(op) -> P(op') with op != op': no collective does
  // this (DTensor refuses both); reported so the plan can be fixed.
  kUnsupported,
};

// "all_gather", "slice", "all_reduce", "reduce_scatter", "all_to_all",
// "none", "unsupported".
std::string_view CollectiveName(Collective collective);

// The collective turning `from` into `to`; `from` != `to`.
Collective CollectiveFor(const Placement& from, const Placement& to);

struct CommunicationRecord {
  std::string fqn;   // the plan entry's module FQN
  std::string port;  // "in:NAME" or "out:NAME"
  NameId axis;       // a mesh axis of the document
  Placement from;
  Placement to;
  Collective collective;
};

struct CollectiveCount {
  Collective collective;
  NameId axis;
  int64_t count;
};

struct CommunicationReport {
  // Plan entries in order; within one: the `in:` ports (the names of in_src
  // in order, then those of in_dst that in_src lacks, in order), then the
  // `out:` ports (out_src, then out_dst's new names, likewise); within a
  // port, the mesh axes in mesh order.
  std::vector<CommunicationRecord> records;
  // One count per (collective, axis) that occurs, ordered by collective (the
  // enum's order), then by axis in mesh order.
  std::vector<CollectiveCount> counts;
};

// A port absent from one side, or an axis absent from a port's named
// placements, is R on that side; an absent (null) map has no ports. Axes
// that are not mesh axes are skipped (the plan checks report them).
// Placements are compared as written: S(-1) and S(1) differ.
CommunicationReport ComputeCommunication(const Document& doc, const std::vector<FqnLayout>& plan);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_COMMUNICATION_H_

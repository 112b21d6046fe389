// The result of checking or planning one document (spec section 8,
// planner-v1 section 3): the verdict, every diagnostic, and views of what
// the engine found, read through the functions below. The engine's own data
// behind a result (the document, its module tree, the owners, the plan)
// stays inside core.
//
//   absl::StatusOr<Result> r = shardplan::Check(json_text, {});
//   if (r.ok() && !r->ok) { /* r->diagnostics[0] is the reference framework's error */ }
//   shardplan::WriteResultJson(*r, std::cout);
#ifndef SHARDPLAN_CORE_RESULT_H_
#define SHARDPLAN_CORE_RESULT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "core/memory_report.h"

namespace shardplan {

// What the engine found: the document, its module tree, the owners, the
// plan (core/outcome.h, internal).
struct Outcome;

struct Result {
  // No error diagnostic.
  bool ok = false;
  // In evaluation order: the first one is the reference framework's error.
  // Every diagnostic, or the first CheckOptions::instances_per_group of
  // each group.
  std::vector<Diagnostic> diagnostics;
  // Every group, with its full count, in the order of its first diagnostic.
  std::vector<DiagnosticGroup> groups;
  // Null for a document that did not parse.
  std::shared_ptr<const Outcome> outcome;
};

// The result of a text that is no valid document: `error` (its
// invalid-document diagnostic), alone in its group.
Result InvalidDocumentResult(Diagnostic error);

// How many diagnostics each code has (listed in the result or not), in
// the order of each code's first diagnostic.
std::vector<std::pair<std::string_view, size_t>> CountByCode(const Result& result);

// The counts of a passing check, as the CLI's summary line prints them.
struct OwnershipCounts {
  size_t owners = 0;
  size_t owned_names = 0;  // parameter names an owner's layout covers, aliases included
  size_t aliases = 0;      // names of tied parameters other than their canonical one
};
// Nullopt unless `result.ok`.
std::optional<OwnershipCounts> CountOwnership(const Result& result);

// One parameter of a plan entry's layout, with its placement per mesh axis
// in document order ("S(0)", "R", "P", "P(max)").
struct PlannedParameter {
  std::string_view name;
  std::vector<std::pair<std::string_view, std::string>> placements;
};

// One entry of the final plan.
struct PlanEntry {
  std::string_view fqn;  // "" is the root
  // Where it came from: "owned:model", "owned:family", "owned:native",
  // "template:AXIS:PATTERN" (one per contributing rule) or "override".
  const std::vector<std::string>* provenance;
  std::vector<PlannedParameter> params;  // empty when its layout has none
};

// One communication record (planner-v1 section 6): on port `port` ("in:X"
// or "out:X") of the module at `fqn`, axis `axis` goes from `from` to `to`
// through `collective` ("all_gather", "slice", "all_reduce",
// "reduce_scatter", "all_to_all", "none" or "unsupported").
struct CommunicationRecordView {
  std::string_view fqn;
  std::string_view port;
  std::string_view axis;
  std::string from;
  std::string to;
  std::string_view collective;
};

// How many records of one collective one axis has.
struct CollectiveTotal {
  std::string_view collective;
  std::string_view axis;
  int64_t count;
};

// The plan Plan() made, read in place: views stay valid while the result
// lives.
class PlanView {
 public:
  explicit PlanView(const Outcome& outcome) : outcome_(&outcome) {}

  size_t size() const;
  PlanEntry entry(size_t index) const;
  // Null when the mesh has more than kMaxMemoryDevices devices.
  const MemoryReport* memory() const;
  // In plan order, ports in order, mesh axes in mesh order.
  size_t communication_size() const;
  CommunicationRecordView communication(size_t index) const;
  // Ordered by collective (as listed above), then by axis in mesh order.
  std::vector<CollectiveTotal> collectives() const;

 private:
  const Outcome* outcome_;
};
// Nullopt unless Plan() made a plan (ownership passed and the document has
// no plan of its own).
std::optional<PlanView> PlanOf(const Result& result);

// The training memory of a result (training-v1 section 4), read in place.
struct TrainingView {
  const TrainingReport* report;
  std::vector<std::string_view> axes;       // the mesh axes, mesh order
  std::optional<uint64_t> device_memory;    // the section's
  double headroom;
};
// Nullopt unless the document has a `training` section and its memory was
// computed: by Plan() for the plan it made, or for the document's own plan
// once every check passed.
std::optional<TrainingView> TrainingOf(const Result& result);

// One owner of a module-owned layout as the engine collected it (spec
// section 4 steps 1-4).
struct OwnerView {
  std::string_view fqn;   // "" is the root
  std::string_view kind;  // "model" (a model provider), "family" or "native"
  // A native owner's request: its index in providers.native, and the index
  // in the request's `match` of the pattern that added the owner (the first
  // of them that matches its FQN) with the pattern itself. nullopt and ""
  // for the other owners.
  std::optional<size_t> native_request;
  std::optional<size_t> native_pattern_index;
  std::string_view native_pattern;
  std::string pointer;  // the JSON pointer of its layout in the document
};

// The owners' layouts as compact JSON, each as the result prints an owner's
// layout in owned.specs: the document's layout (a family's cached one when it
// has one) less the params that claims dropped (tied parameters an earlier
// owner claims with the same placement), with normalized out_names. Owners
// that share a layout share its text.
struct OwnerLayouts {
  std::vector<std::string> texts;  // each distinct one once
  std::vector<size_t> of_owner;    // per owner, the index of its text
};

// The owners of a parsed document, in entry order (the order of owned.specs
// in an ok result), read in place: views stay valid while the result lives.
// Every check and plan of a parsed document keeps them, also when a check
// after collection failed; what collection refused (unknown-module,
// multiple-owners, native-overlaps-family) is no owner.
class OwnersView {
 public:
  explicit OwnersView(const Outcome& outcome);

  size_t size() const;
  OwnerView owner(size_t index) const;
  OwnerLayouts Layouts() const;

 private:
  const Outcome* outcome_;
  std::vector<uint32_t> native_patterns_;  // per owner (NativePatterns)
};
// Nullopt for a document that did not parse.
std::optional<OwnersView> OwnersOf(const Result& result);

// One parameter slot whose parameter an owner claims (an entry of the
// result's owned_names).
struct OwnedParameterView {
  std::string name;  // the slot's full name
  // The parameter's canonical full name, under which it was claimed first:
  // `name`, unless the slot is another name of a tied parameter (an alias).
  std::string canonical;
  size_t owner;  // the OwnersView index of the owner that claimed the parameter first
  // Its placement per mesh axis as that owner's layout lists them ("S(0)",
  // "R", "P", "P(max)").
  std::vector<std::pair<std::string_view, std::string>> placements;
};

// The owned parameter slots of an ok result (its owned_names), in
// named_parameters(root) order (a tied parameter once per slot), read in
// place: views stay valid while the result lives.
class OwnedParametersView {
 public:
  explicit OwnedParametersView(const Outcome& outcome);

  size_t size() const;
  OwnedParameterView parameter(size_t index) const;

 private:
  struct Index;  // the slots and who claimed each parameter first (result.cc)
  const Outcome* outcome_;
  std::shared_ptr<const Index> index_;
};
// Nullopt unless the result is ok (its JSON has `owned`).
std::optional<OwnedParametersView> OwnedParametersOf(const Result& result);

// Writes the result as compact JSON (schema shardplan.result.v1, one object
// without a trailing newline) to `out`, as it goes: the same input always
// gives the same bytes. "diagnostics" lists the result's diagnostics, or
// only the first `max_diagnostics` of them when that is not 0; "ok" follows
// them (so that they can be written before the verdict is known,
// ResultJsonWriter), then "groups" with every group ({code, severity,
// pointer, count, listed: the indexes of its diagnostics in
// "diagnostics"}) and "counts" with the diagnostics per code ({code:
// count}, in the order of first occurrence). Layouts print params, in_src
// and in_dst always (null when null), out_src, out_dst and out_names only
// when non-null; `expected` and `required` list parameter ids sorted,
// `owned_names` sorted. A planned result adds "plan": {"modules": {FQN:
// layout}}, "provenance": {FQN: [...]}, "memory" (null beyond
// kMaxMemoryDevices), "communication" (records) and "collectives"
// ({collective: {axis: count}}).
void WriteResultJson(const Result& result, std::ostream& out, size_t max_diagnostics = 0);
// The same, as a string.
std::string ResultToJson(const Result& result, size_t max_diagnostics = 0);

// WriteResultJson while the engine runs: given as CheckOptions::stream, it
// writes each diagnostic as the engine makes it, and Finish writes the rest
// once the result is made. The bytes are WriteResultJson's for the result
// made without a stream, and a storm of findings is never held whole.
// Nothing is written before the first diagnostic or Finish, so a run the
// engine refuses (a status error) leaves `out` untouched.
//
//   shardplan::ResultJsonWriter json(std::cout);
//   options.stream = &json;
//   absl::StatusOr<shardplan::Result> r = shardplan::Check(text, options);
//   if (r.ok()) json.Finish(*r);
class ResultJsonWriter final : public DiagnosticStream {
 public:
  // Lists the first `max_diagnostics` diagnostics (0: every one).
  explicit ResultJsonWriter(std::ostream& out, size_t max_diagnostics = 0);
  ~ResultJsonWriter() override;
  ResultJsonWriter(const ResultJsonWriter&) = delete;
  ResultJsonWriter& operator=(const ResultJsonWriter&) = delete;

  void Write(const Diagnostic& diagnostic) override;
  // Writes the rest of `result`, made with this writer as its stream (or
  // made without a stream while nothing was written: WriteResultJson), and
  // ends the object. The writer can then take the next result.
  void Finish(const Result& result);

 private:
  struct State;  // the JSON writer of the result begun (result_json.cc)
  State& Started();

  std::ostream& out_;
  size_t max_diagnostics_;
  std::unique_ptr<State> state_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_RESULT_H_

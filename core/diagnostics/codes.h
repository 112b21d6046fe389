// The table of diagnostics: every code the engine reports, with its
// spelling, its severity, its message and where it is documented. Checkers
// name a code (DiagnosticSink::Report(Code::kSharedConflict, ...)); the table
// owns the rest. tests/core/codes_test.cc holds it against docs/semantics.md
// and docs/planning.md (every code documented there, every documented code
// here) and tests/golden (a failing document for each code).
//
// A message is a format: "{N}" is argument N as given, "{N!r}" its Python
// repr (the reference prints names so), "{N!l}" a list argument as a Python
// list of reprs. The ownership codes' messages are the reference
// framework's, word for word (spec section 5).
#ifndef SHARDPLAN_CORE_DIAGNOSTICS_CODES_H_
#define SHARDPLAN_CORE_DIAGNOSTICS_CODES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/diagnostic.h"

namespace shardplan {

enum class Code : uint8_t {
  // The document (spec section 2).
  kInvalidDocument,
  // Collecting owners (section 4, steps 1-4).
  kUnknownModule,
  kMultipleOwners,
  kParallelMemberUndeclared,
  kUnknownOutput,
  kNativeNoMatch,
  kNativeOverlapsFamily,
  kOverlappingCommunication,
  // One owner's layout (step 5).
  kLegacyInjection,
  kPortsMissing,
  kPortsMismatch,
  kUnknownForwardInput,
  kDuplicateOutputName,
  kUnknownAxis,
  kPartialParameter,
  kParallelUnknownAxis,
  // Parameter claims (step 6).
  kUnknownParameter,
  kNestedDuplicate,
  kSharedConflict,
  kOmittedParameters,
  // The final plan (section 6).
  kOverrideSharedConflict,
  kOverrideRemovedOwnership,
  kOverrideRemovedCoverage,
  kFamilyLayoutChanged,
  // Making the plan (planner-v1 sections 1-3).
  kTemplateConflict,
  kTemplateSkippedOwned,
  kUnusedTemplateRule,
  kLegacyStyleName,
  kUnplannedParameters,
  // The plan's shapes (planner-v1 section 4).
  kShardDimOutOfRange,
  kEmptyShard,
  kUnevenShard,
  // A pipeline plan (Hugging Face base_model_pp_plan).
  kPipelineUnknownModule,
  kPipelineUnknownInput,
  // Training memory (training-v1).
  kTrainingPatternNoMatch,
  kExceedsDeviceMemory,
  kNearDeviceMemory,
};

// The stage of the pipeline that reports a code: the ownership stages run
// in `check` and `plan` alike, the planning ones in `plan` (and the shape
// checks on a document's own plan in `check` too).
enum class Stage : uint8_t { kDocument, kOwnership, kPlanCheck, kPlanning };

struct CodeInfo {
  Code code;
  std::string_view name;  // the stable kebab-case spelling
  Stage stage;
  Severity severity;        // as `shardplan plan` reports it
  Severity check_severity;  // as `shardplan check` reports it
  std::string_view format;  // the message (see above)
  std::string_view doc;     // the file under docs/ and the anchor of its section
};

inline constexpr CodeInfo kCodes[] = {
    {Code::kInvalidDocument, "invalid-document", Stage::kDocument, Severity::kError, Severity::kError,
     "{0}", "semantics.md#invalid-document"},

    {Code::kUnknownModule, "unknown-module", Stage::kOwnership, Severity::kError, Severity::kError,
     "no module at {0!r}", "semantics.md#unknown-module"},
    {Code::kMultipleOwners, "multiple-owners", Stage::kOwnership, Severity::kError, Severity::kError,
     "multiple layout/communication owners for module {0!r}", "semantics.md#multiple-owners"},
    {Code::kParallelMemberUndeclared, "parallel-member-undeclared", Stage::kOwnership, Severity::kError,
     Severity::kError, "a parallel family member must declare its explicit execution protocol",
     "semantics.md#parallel-member-undeclared"},
    {Code::kUnknownOutput, "unknown-output", Stage::kOwnership, Severity::kError, Severity::kError,
     "layout declares unknown outputs {0!l}", "semantics.md#unknown-output"},
    {Code::kNativeNoMatch, "native-no-match", Stage::kOwnership, Severity::kError, Severity::kError,
     "native binding pattern {0!r} matched no module", "semantics.md#native-no-match"},
    {Code::kNativeOverlapsFamily, "native-overlaps-family", Stage::kOwnership, Severity::kError, Severity::kError,
     "native binding at {0!r} overlaps a family-owned subtree", "semantics.md#native-overlaps-family"},
    {Code::kOverlappingCommunication, "overlapping-communication", Stage::kOwnership, Severity::kError,
     Severity::kError, "overlapping communication owners at {0!r} and {1!r}",
     "semantics.md#overlapping-communication"},

    {Code::kLegacyInjection, "legacy-injection", Stage::kOwnership, Severity::kError, Severity::kError,
     "module-owned layouts cannot install legacy compute injection", "semantics.md#legacy-injection"},
    {Code::kPortsMissing, "ports-missing", Stage::kOwnership, Severity::kError, Severity::kError,
     "module-owned providers must declare params, in_src and in_dst explicitly", "semantics.md#ports-missing"},
    {Code::kPortsMismatch, "ports-mismatch", Stage::kOwnership, Severity::kError, Severity::kError,
     "module-owned in_src and in_dst must declare the same input names", "semantics.md#ports-mismatch"},
    {Code::kUnknownForwardInput, "unknown-forward-input", Stage::kOwnership, Severity::kError, Severity::kError,
     "layout declares unknown forward inputs {0!l}", "semantics.md#unknown-forward-input"},
    {Code::kDuplicateOutputName, "duplicate-output-name", Stage::kOwnership, Severity::kError, Severity::kError,
     "output names must be unique", "semantics.md#duplicate-output-name"},
    {Code::kUnknownAxis, "unknown-axis", Stage::kOwnership, Severity::kError, Severity::kError,
     "module layouts cannot declare storage/unknown axis {0!r}", "semantics.md#unknown-axis"},
    {Code::kPartialParameter, "partial-parameter", Stage::kOwnership, Severity::kError, Severity::kError,
     "parameter source layouts cannot be Partial", "semantics.md#partial-parameter"},
    {Code::kParallelUnknownAxis, "parallel-unknown-axis", Stage::kOwnership, Severity::kError, Severity::kError,
     "parallel module declares unknown communication axis {0!r}", "semantics.md#parallel-unknown-axis"},

    {Code::kUnknownParameter, "unknown-parameter", Stage::kOwnership, Severity::kError, Severity::kError,
     "layout parameter {0!r} does not exist", "semantics.md#unknown-parameter"},
    {Code::kNestedDuplicate, "nested-duplicate", Stage::kOwnership, Severity::kError, Severity::kError,
     "parent layout duplicates nested module ownership at {0!r}", "semantics.md#nested-duplicate"},
    {Code::kSharedConflict, "shared-conflict", Stage::kOwnership, Severity::kError, Severity::kError,
     "shared parameter {0!r} has conflicting layouts", "semantics.md#shared-conflict"},
    {Code::kOmittedParameters, "omitted-parameters", Stage::kOwnership, Severity::kError, Severity::kError,
     "module-owned layout {0!r} omits parameters {1!l}", "semantics.md#omitted-parameters"},

    {Code::kOverrideSharedConflict, "override-shared-conflict", Stage::kPlanCheck, Severity::kError,
     Severity::kError, "explicit overrides give shared parameter {0!r} conflicting layouts",
     "semantics.md#override-shared-conflict"},
    {Code::kOverrideRemovedOwnership, "override-removed-ownership", Stage::kPlanCheck, Severity::kError,
     Severity::kError, "final override removed required parameter ownership from {0!r}",
     "semantics.md#override-removed-ownership"},
    {Code::kOverrideRemovedCoverage, "override-removed-coverage", Stage::kPlanCheck, Severity::kError,
     Severity::kError, "final layout overrides removed required module-owned parameter coverage",
     "semantics.md#override-removed-coverage"},
    {Code::kFamilyLayoutChanged, "family-layout-changed", Stage::kPlanCheck, Severity::kError, Severity::kError,
     "final layout for {0!r} differs from its applied family layout", "semantics.md#family-layout-changed"},

    // {0}: "parameter 'FULL NAME'" or "port in:NAME of 'FQN'" (or out:).
    {Code::kTemplateConflict, "template-conflict", Stage::kPlanning, Severity::kError, Severity::kError,
     "templates place {0} twice on axis {1!r} (rule {2!r})", "planning.md#template-conflict"},
    {Code::kTemplateSkippedOwned, "template-skipped-owned", Stage::kPlanning, Severity::kWarning,
     Severity::kWarning, "template rule {0!r} matches {1!r}, whose layout a module owns: templates never override it",
     "planning.md#template-skipped-owned"},
    // {1}: the style's name.
    {Code::kUnusedTemplateRule, "unused-template-rule", Stage::kPlanning, Severity::kWarning, Severity::kWarning,
     "template rule {0!r} ({1} on {2!r}) matched no module or parameter", "planning.md#unused-template-rule"},
    // {2}: "transformers 5 calls it 'NAME'", "transformers 5 has 'NAME' in
    // its place, which ..." or "transformers 5 has no such style".
    {Code::kLegacyStyleName, "legacy-style-name", Stage::kPlanning, Severity::kInfo, Severity::kInfo,
     "template rule {0!r} uses {1!r}, a transformers 4.x style name: {2}", "planning.md#legacy-style-name"},
    // {0}: "1 parameter is" or "N parameters are"; {1}: "stays" or "stay";
    // {2}: the first five full names, ", "-joined; {3}: " and N more" or "".
    {Code::kUnplannedParameters, "unplanned-parameters", Stage::kPlanning, Severity::kInfo, Severity::kInfo,
     "{0} declared by no plan entry and {1} replicated: {2}{3}", "planning.md#unplanned-parameters"},

    // {1}: the placement ("S(2)"); {3}: "it is a scalar (rank 0): it has no
    // dim to shard" or "it has rank R: dims are -R to R-1".
    {Code::kShardDimOutOfRange, "shard-dim-out-of-range", Stage::kPlanning, Severity::kError, Severity::kWarning,
     "parameter {0!r} is sharded {1} on axis {2!r} but {3}", "planning.md#shard-dim-out-of-range"},
    // {1}: the dim ("dim 0 has 8 units (blocks of 128)"); {2}: "is split
    // over " or "each part is split over "; {3}: the devices ("16 devices
    // (tp=16)").
    {Code::kEmptyShard, "empty-shard", Stage::kPlanning, Severity::kWarning, Severity::kWarning,
     "parameter {0!r} {1} but {2}{3}: some devices hold nothing", "planning.md#empty-shard"},
    // {1} to {3} as for empty-shard; {4}: the unit count; {5}: the shard
    // count it must divide by ("16", or "2 x 8 = 16" with fused parts); {6}:
    // the shard counts that would divide it, or "".
    {Code::kUnevenShard, "uneven-shard", Stage::kPlanning, Severity::kWarning, Severity::kWarning,
     "parameter {0!r} {1} and {2}{3}: {4} is not a multiple of {5}{6}", "planning.md#uneven-shard"},

    // A pipeline plan is the planner's: an error in `plan`, a warning in
    // `check` (which keeps the reference's verdict).
    {Code::kPipelineUnknownModule, "pipeline-unknown-module", Stage::kPlanning, Severity::kError,
     Severity::kWarning, "pipeline plan names module {0!r}, which does not exist", "planning.md#pipeline-unknown-module"},
    // {0}: the stage's module as the plan names it.
    {Code::kPipelineUnknownInput, "pipeline-unknown-input", Stage::kPlanning, Severity::kError, Severity::kWarning,
     "pipeline stage {0!r} takes {1!r}, which is no forward input of its module or of the model, nor an earlier "
     "stage's output", "planning.md#pipeline-unknown-input"},
    // {0}: frozen or fsdp_units; {1}: the pattern; {2}: parameter or module.
    {Code::kTrainingPatternNoMatch, "training-pattern-no-match", Stage::kPlanning, Severity::kWarning,
     Severity::kWarning, "training.{0} pattern {1!r} matches no {2}", "planning.md#training-pattern-no-match"},
    // The verdict: a warning in `check`, whose verdict stays the reference's.
    // {0}: the device and its coordinates; {1}: its total; {2}: the budget;
    // {3}: what would fit.
    {Code::kExceedsDeviceMemory, "exceeds-device-memory", Stage::kPlanning, Severity::kError, Severity::kWarning,
     "{0} needs {1} for training, more than device_memory {2}; {3}", "planning.md#exceeds-device-memory"},
    {Code::kNearDeviceMemory, "near-device-memory", Stage::kPlanning, Severity::kWarning, Severity::kWarning,
     "{0} needs {1} for training, more than {2}; {3}", "planning.md#near-device-memory"},
};

inline constexpr size_t kCodeCount = sizeof(kCodes) / sizeof(kCodes[0]);

// Row i of the table is the code numbered i.
constexpr bool RowsInCodeOrder() {
  for (size_t i = 0; i < kCodeCount; ++i) {
    if (static_cast<size_t>(kCodes[i].code) != i) return false;
  }
  return true;
}
static_assert(RowsInCodeOrder(), "kCodes lists every Code once, in the enum's order");

constexpr const CodeInfo& InfoOf(Code code) { return kCodes[static_cast<size_t>(code)]; }

// Spells a message format into `out`: its text as is, and each field by
// `field(out, n, conversion)`, which appends argument n's spelling for the
// conversion: ' ' ("{N}"), 'r' ("{N!r}") or 'l' ("{N!l}"). The table's
// formats are well formed (codes_test).
template <typename Field>
void SpellFormat(std::string_view format, std::string& out, Field&& field) {
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '{') {
      out += format[i];
      continue;
    }
    const size_t close = format.find('}', i);
    const std::string_view spec = format.substr(i + 1, close - i - 1);
    field(out, static_cast<size_t>(spec[0] - '0'), spec.size() == 3 ? spec[2] : ' ');
    i = close;
  }
}

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTICS_CODES_H_

// The engine's entry points: check or plan one shardplan.v1 document.
//
//   absl::StatusOr<Result> r = shardplan::Check(json_text, {});
//   if (!r.ok()) { /* misuse: bad options */ }
//   if (!r->ok) { /* r->diagnostics[0] is the reference framework's error */ }
//   shardplan::WriteResultJson(*r, std::cout);
//
// Findings about the document (including malformed JSON) are diagnostics in
// the Result; only misuse of the API is an error Status.
#ifndef SHARDPLAN_CORE_ENGINE_H_
#define SHARDPLAN_CORE_ENGINE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/diagnostic.h"
#include "core/limits.h"
#include "core/result.h"

namespace shardplan {

// A parsed (or built) document: core/model/document.h, internal.
struct Document;

struct CheckOptions {
  Limits limits;
  // Worker threads for the parallel phases; 0 means all cores. Results and
  // the order of diagnostics are the same for every value.
  int threads = 0;
  // How many diagnostics of each group (same code at the same declaration,
  // DiagnosticGroup) the result lists; the others are only counted, in
  // Result::groups, and never made, so a storm of findings costs neither
  // time nor memory per finding. 0 lists every diagnostic.
  size_t instances_per_group = 0;
  // Where the diagnostics the result lists go, one at a time in evaluation
  // order as they are made (null: into Result::diagnostics). With a stream
  // the result's diagnostics stay empty and its groups' `listed` count what
  // went to the stream: a storm of findings written out as it comes
  // (ResultJsonWriter) costs no memory per finding beyond its index.
  DiagnosticStream* stream = nullptr;
};

// Parses the document, then checks it as CheckParsed does; a malformed
// document gives the single invalid-document diagnostic.
absl::StatusOr<Result> Check(std::string_view json, const CheckOptions& options);

// Makes and checks a plan (planner-v1): the ownership checks of Check, then,
// when they succeed, the final plan from owners, templates and overrides
// (PlanOf(result)), checked like a document's plan. A document with a `plan`
// of its own is checked as Check would.
absl::StatusOr<Result> Plan(std::string_view json, const CheckOptions& options);

// Check() and Plan() of a text the caller lets go early: `release` is called
// as soon as the document is parsed (before the checks, and also when the
// options are refused), so that a large document's text is not held in
// memory through the checks (the CLI frees or unmaps its input there).
absl::StatusOr<Result> CheckText(std::string_view json, const std::function<void()>& release,
                                 const CheckOptions& options);
absl::StatusOr<Result> PlanText(std::string_view json, const std::function<void()>& release,
                                const CheckOptions& options);

// A document parsed once, to be checked or planned any number of times, from
// several threads at once (the C ABI).
struct ParsedDocument {
  std::shared_ptr<const Document> document;  // null when the text is no valid document
  std::optional<Diagnostic> error;           // then the single invalid-document diagnostic
};
ParsedDocument Parse(std::string_view json, const Limits& limits);

// One row of the table of diagnostics (core/diagnostics/codes.h): what
// tools that list rules (SARIF) need.
struct DiagnosticCode {
  std::string_view name;      // "unknown-module"
  Severity severity;          // as Plan reports it
  Severity check_severity;    // as Check reports it
  std::string_view message;   // the message with its arguments as "…": "no module at '…'"
  std::string_view doc;       // the docs/ file and anchor: "semantics.md#unknown-module"
};
// Every code the engine reports, in the table's order.
const std::vector<DiagnosticCode>& DiagnosticCodes();

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlong form, no
// surrogate, nothing past U+10FFFF, no sequence cut short; a NUL byte is
// U+0000). Names given to a DocumentBuilder must be (builder.h): a caller
// that takes them from outside, as the C ABI does, checks them with this.
bool IsValidUtf8(std::string_view text);

// Collects module-owned layouts and claims (spec section 4), then, when that
// succeeded and the document has a plan, checks the plan (section 6). Every
// diagnostic is reported in evaluation order; a check that depends on a
// failed step is skipped. `document` is only read; `threads` as in
// CheckOptions.
absl::StatusOr<Result> CheckParsed(std::shared_ptr<const Document> document, int threads);

// Plan() of a parsed document: plans a private copy, so `document` is only
// read.
absl::StatusOr<Result> PlanParsed(const Document& document, int threads);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_ENGINE_H_

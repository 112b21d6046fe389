// The engine's entry point: check one shardplan.v1 document.
//
//   absl::StatusOr<Result> r = shardplan::Check(json_text, {});
//   if (!r.ok()) { /* misuse: bad options */ }
//   if (!r->ok) { /* r->diagnostics[0] is the reference framework's error */ }
//   std::string out = shardplan::ResultToJson(*r);
//
// Findings about the document (including malformed JSON) are diagnostics in
// the Result; only misuse of the API is an error Status.
#ifndef SHARDPLAN_CORE_ENGINE_H_
#define SHARDPLAN_CORE_ENGINE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/model/parse.h"
#include "core/result.h"

namespace shardplan {

struct CheckOptions {
  Limits limits;
  // Worker threads for the parallel phases; 0 means all cores. Results and
  // the order of diagnostics are the same for every value.
  int threads = 0;
};

// Parses the document, then checks it as CheckParsed does; a malformed
// document gives the single invalid-document diagnostic.
absl::StatusOr<Result> Check(std::string_view json, const CheckOptions& options);

// Collects module-owned layouts and claims (spec section 4), then, when that
// succeeded and the document has a plan, checks the plan (section 6). Every
// diagnostic is reported in evaluation order; a check that depends on a
// failed step is skipped. `document` is only read, so one document may be
// checked by several threads at once; `threads` as in CheckOptions.
absl::StatusOr<Result> CheckParsed(std::shared_ptr<const Document> document, int threads);

// Makes and checks a plan (planner-v1): the ownership checks of Check, then,
// when they succeed, the final plan from owners, templates and overrides
// (Result::planned), checked like a document's plan. A document with a
// `plan` of its own is checked as Check would.
absl::StatusOr<Result> Plan(std::string_view json, const CheckOptions& options);

// Check() and Plan() of a text the caller lets go early: `release` is called
// as soon as the document is parsed (before the checks, and also when the
// options are refused), so that a large document's text is not held in
// memory through the checks (the CLI frees or unmaps its input there).
absl::StatusOr<Result> CheckText(std::string_view json, const std::function<void()>& release,
                                 const CheckOptions& options);
absl::StatusOr<Result> PlanText(std::string_view json, const std::function<void()>& release,
                                const CheckOptions& options);

// Plan() of a document parsed once (the C ABI): plans a private copy, so
// `document` is only read and may be planned or checked by several threads.
absl::StatusOr<Result> PlanParsed(const Document& document, int threads);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_ENGINE_H_

#include "fuzz/document_fuzz.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/engine.h"
#include "core/model/parse.h"
#include "core/result.h"
#include "core/text/utf8.h"
#include "fuzz/fuzz_check.h"
#include "rapidjson/document.h"
#include "tests/support/resolve_pointer.h"

namespace shardplan {

void FuzzDocument(const uint8_t* data, size_t size, Job job) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckOptions options;
  // One thread: the parallel phases give the same result for every count
  // (tests/core/threads_test, under ThreadSanitizer too), and a thread pool
  // per input would be most of the time spent.
  options.threads = 1;
  // The default limits let a few kilobytes of shared submodules expand to
  // ten million module paths, which takes seconds by design
  // (docs/format.md section 5): tighter limits keep a timeout a finding.
  options.limits.max_paths = 100'000;
  options.limits.max_fqn_bytes = 16 << 20;
  absl::StatusOr<Result> result = job == Job::kPlan ? Plan(text, options) : Check(text, options);
  // With threads, the engine reads a text while it checks its bytes, so the
  // reading must be safe on a text that fails the check too (which one
  // thread never reads).
  if (utf8::ValidNulFreePrefix(text) != text.size()) ReadDocument(text, options.limits);
  FUZZ_CHECK(result.ok(), "the engine refused the call: %s", std::string(result.status().message()).c_str());

  const std::string json = ResultToJson(*result);
  rapidjson::Document written;
  written.Parse(json.data(), json.size());
  FUZZ_CHECK(!written.HasParseError() && written.IsObject(), "the result's JSON is malformed: %s", json.c_str());
  const bool has_error = std::any_of(result->diagnostics.begin(), result->diagnostics.end(),
                                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
  FUZZ_CHECK(result->ok == !has_error, "ok is %d with%s an error diagnostic", result->ok, has_error ? "" : "out");

  rapidjson::Document document;
  document.Parse(text.data(), text.size());
  if (!document.HasParseError()) {
    for (const Diagnostic& d : result->diagnostics) {
      if (!d.pointer || d.pointer->empty()) continue;
      FUZZ_CHECK(ResolvePointer(document, *d.pointer) != nullptr, "[%s] pointer '%s' names nothing in the document",
                 d.code.c_str(), d.pointer->c_str());
    }
  }

  if (std::optional<PlanView> plan = PlanOf(*result); plan && plan->memory() != nullptr) {
    const MemoryReport& m = *plan->memory();
    FUZZ_CHECK(m.min_bytes <= m.max_bytes && m.max_bytes <= m.unsharded_bytes,
               "memory out of order: min %llu, max %llu, unsharded %llu", (unsigned long long)m.min_bytes,
               (unsigned long long)m.max_bytes, (unsigned long long)m.unsharded_bytes);
    // The mean is a double: within its rounding of the bounds.
    const double slack = 1e-9 * static_cast<double>(m.max_bytes);
    FUZZ_CHECK(m.mean_bytes >= static_cast<double>(m.min_bytes) - slack &&
                   m.mean_bytes <= static_cast<double>(m.max_bytes) + slack,
               "mean %f outside [%llu, %llu]", m.mean_bytes, (unsigned long long)m.min_bytes,
               (unsigned long long)m.max_bytes);
  }
}

}  // namespace shardplan

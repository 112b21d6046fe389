// A finding about a document, reported as data (never thrown): a stable
// kebab-case code, a severity, the message (for the ownership errors exactly
// the reference framework's) and, where known, the module FQN, the parameter
// name and the RFC 6901 JSON pointer of the declaration at fault. Every code,
// its severity and its message are listed in core/diagnostics/codes.h.
#ifndef SHARDPLAN_CORE_DIAGNOSTIC_H_
#define SHARDPLAN_CORE_DIAGNOSTIC_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardplan {

// An error fails the document; warnings and infos do not.
enum class Severity { kError, kWarning, kInfo };

// "error", "warning" or "info".
std::string_view SeverityName(Severity severity);

// One operation of an RFC 6902 JSON Patch on the document: "move" (from
// -> path) or "replace" (path's value by `value`, JSON text).
struct FixOperation {
  std::string op;
  std::string path;
  std::optional<std::string> from = std::nullopt;
  std::optional<std::string> value = std::nullopt;
  friend bool operator==(const FixOperation&, const FixOperation&) = default;
};

// What to change for a finding, where the engine knows: `help` says it
// ("did you mean 'tp'?"); `fix`, where the change is mechanical, makes it as
// RFC 6902 JSON Patch operations on the document: applied, the finding goes
// away without adding an error to the stages that ran (a stage its error
// skipped may then report what it finds; empty when there is none). The diagnostics
// of one cause share one: an over-wide pattern's million findings hold a
// pointer each, not a million copies.
struct FixIt {
  std::string help;
  std::vector<FixOperation> fix;
};

struct Diagnostic {
  std::string code;
  Severity severity = Severity::kError;
  std::string message;
  std::optional<std::string> fqn;
  std::optional<std::string> parameter;
  std::optional<std::string> pointer;
  // Null when the engine knows no fix.
  std::shared_ptr<const FixIt> fix_it;
};

// Diagnostics with one cause: the same code at the same declaration (the
// same pointer, or none), as one over-wide native pattern gives one
// diagnostic per module it should not have matched. Groups are listed in
// the order of their first diagnostic.
struct DiagnosticGroup {
  std::string code;
  Severity severity = Severity::kError;
  std::optional<std::string> pointer;
  size_t count = 0;  // the group's diagnostics, listed in the result or not
  // Its diagnostics that the result lists (indexes into
  // Result::diagnostics, or into what went to CheckOptions::stream, in
  // order): every one, or the first few (CheckOptions::instances_per_group).
  // Never empty.
  std::vector<size_t> listed;
};

// Takes a result's diagnostics one at a time as the engine makes them
// (CheckOptions::stream), so that a caller writing them out holds none: a
// storm of findings then costs no memory per finding. Calls come in
// evaluation order and never at once, though possibly from different worker
// threads of the run.
class DiagnosticStream {
 public:
  virtual ~DiagnosticStream() = default;
  virtual void Write(const Diagnostic& diagnostic) = 0;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTIC_H_

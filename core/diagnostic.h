// A finding about a document, reported as data (never thrown): a stable
// kebab-case code, a severity, the message (for the ownership errors exactly
// the reference framework's) and, where known, the module FQN, the parameter
// name and the RFC 6901 JSON pointer of the declaration at fault. Every code,
// its severity and its message are listed in core/diagnostics/codes.h.
#ifndef SHARDPLAN_CORE_DIAGNOSTIC_H_
#define SHARDPLAN_CORE_DIAGNOSTIC_H_

#include <cstddef>
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
  std::optional<std::string> from;
  std::optional<std::string> value;
  friend bool operator==(const FixOperation&, const FixOperation&) = default;
};

struct Diagnostic {
  std::string code;
  Severity severity = Severity::kError;
  std::string message;
  std::optional<std::string> fqn;
  std::optional<std::string> parameter;
  std::optional<std::string> pointer;
  // What to change, where the engine knows ("did you mean 'tp'?").
  std::optional<std::string> help;
  // The change as a JSON Patch, where it is mechanical: applied to the
  // document, it makes this finding go away without adding an error.
  // Empty when there is none.
  std::vector<FixOperation> fix;
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
  // Result::diagnostics, in order): every one, or the first few
  // (CheckOptions::instances_per_group). Never empty.
  std::vector<size_t> listed;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTIC_H_

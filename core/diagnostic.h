// A finding about a document, reported as data (never thrown): a stable
// kebab-case code, a severity, the message (for the ownership errors exactly
// the reference framework's) and, where known, the module FQN, the parameter
// name and the RFC 6901 JSON pointer of the declaration at fault. Every code,
// its severity and its message are listed in core/diagnostics/codes.h.
#ifndef SHARDPLAN_CORE_DIAGNOSTIC_H_
#define SHARDPLAN_CORE_DIAGNOSTIC_H_

#include <optional>
#include <string>
#include <string_view>

namespace shardplan {

// An error fails the document; warnings and infos do not.
enum class Severity { kError, kWarning, kInfo };

// "error", "warning" or "info".
std::string_view SeverityName(Severity severity);

struct Diagnostic {
  std::string code;
  Severity severity = Severity::kError;
  std::string message;
  std::optional<std::string> fqn;
  std::optional<std::string> parameter;
  std::optional<std::string> pointer;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTIC_H_

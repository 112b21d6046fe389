// Diagnostics: findings about a document, reported as data (never thrown).
//
// A Diagnostic carries a stable kebab-case code, a severity, the message (for
// ownership errors exactly the reference framework's message) and, where known,
// the module FQN, the parameter name and the RFC 6901 JSON pointer of the
// declaration at fault.
#ifndef SHARDPLAN_CORE_DIAGNOSTIC_H_
#define SHARDPLAN_CORE_DIAGNOSTIC_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardplan {

enum class Severity { kError, kWarning, kInfo };

std::string_view SeverityName(Severity severity);

struct Diagnostic {
  std::string code;
  Severity severity = Severity::kError;
  std::string message;
  std::optional<std::string> fqn;
  std::optional<std::string> parameter;
  std::optional<std::string> pointer;
};

// Collects diagnostics in evaluation order.
class DiagnosticSink {
 public:
  // Appends an error and returns it so that callers can fill optional fields
  // (and lower its severity).
  Diagnostic& Error(std::string_view code, std::string message);

  // Appends every diagnostic of `other`, in order (inline when there is
  // none: the checks append a sink per owner, a million times).
  void Append(DiagnosticSink&& other) {
    if (!other.diagnostics_.empty()) AppendAll(std::move(other));
  }

  // Whether some diagnostic is an error (warnings and infos do not fail a
  // document).
  bool has_errors() const;
  std::vector<Diagnostic> Take() { return std::move(diagnostics_); }
  // Leaves no diagnostic, keeping the storage.
  void Clear() { diagnostics_.clear(); }

 private:
  void AppendAll(DiagnosticSink&& other);

  std::vector<Diagnostic> diagnostics_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTIC_H_

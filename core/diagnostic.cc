#include "core/diagnostic.h"

namespace shardplan {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "error";
}

Diagnostic& DiagnosticSink::Error(std::string_view code, std::string message) {
  diagnostics_.push_back(
      Diagnostic{std::string(code), Severity::kError, std::move(message), {}, {}, {}});
  return diagnostics_.back();
}

}  // namespace shardplan

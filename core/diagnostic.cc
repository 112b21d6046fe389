#include "core/diagnostic.h"

#include <algorithm>
#include <iterator>

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

bool DiagnosticSink::has_errors() const {
  return std::any_of(diagnostics_.begin(), diagnostics_.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

void DiagnosticSink::AppendAll(DiagnosticSink&& other) {
  if (diagnostics_.empty()) {
    diagnostics_ = std::move(other.diagnostics_);
  } else {
    diagnostics_.insert(diagnostics_.end(), std::make_move_iterator(other.diagnostics_.begin()),
                        std::make_move_iterator(other.diagnostics_.end()));
  }
  other.diagnostics_.clear();
}

}  // namespace shardplan

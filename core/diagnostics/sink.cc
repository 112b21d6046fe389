#include "core/diagnostics/sink.h"

#include <algorithm>
#include <iterator>

#include "core/text/pyrepr.h"

namespace shardplan {

std::string FormatMessage(Code code, std::initializer_list<MessageArg> args) {
  const std::string_view format = InfoOf(code).format;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '{') {
      out += format[i];
      continue;
    }
    // "{N}", "{N!r}" or "{N!l}": the table's formats are checked by
    // codes_test, and every call passes as many arguments as its format uses.
    const size_t close = format.find('}', i);
    const std::string_view field = format.substr(i + 1, close - i - 1);
    const MessageArg& arg = args.begin()[field[0] - '0'];
    const char conversion = field.size() == 3 ? field[2] : ' ';
    if (conversion == 'l') {
      out += PyReprList(*arg.list());
    } else if (conversion == 'r') {
      out += PyRepr(arg.text());
    } else {
      out += arg.text();
    }
    i = close;
  }
  return out;
}

Diagnostic MakeDiagnostic(Code code, Mode mode, const Where& where, std::initializer_list<MessageArg> args) {
  const CodeInfo& info = InfoOf(code);
  Diagnostic d;
  d.code = std::string(info.name);
  d.severity = mode == Mode::kPlan ? info.severity : info.check_severity;
  d.message = FormatMessage(code, args);
  if (where.fqn) d.fqn = std::string(*where.fqn);
  if (where.parameter) d.parameter = std::string(*where.parameter);
  if (where.pointer) d.pointer = std::string(*where.pointer);
  return d;
}

void DiagnosticSink::Append(DiagnosticSink&& other) {
  if (other.diagnostics_.empty()) return;
  if (diagnostics_.empty()) {
    diagnostics_ = std::move(other.diagnostics_);
  } else {
    diagnostics_.insert(diagnostics_.end(), std::make_move_iterator(other.diagnostics_.begin()),
                        std::make_move_iterator(other.diagnostics_.end()));
  }
  other.diagnostics_.clear();
}

bool DiagnosticSink::has_errors() const {
  return std::any_of(diagnostics_.begin(), diagnostics_.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

}  // namespace shardplan

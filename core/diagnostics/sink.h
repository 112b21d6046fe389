// Reporting diagnostics: a checker names the code of the table
// (core/diagnostics/codes.h), where the finding is and the message's
// arguments; the sink spells the rest.
//
//   sink.Report(Code::kSharedConflict, {.fqn = fqn, .parameter = full, .pointer = pointer}, full);
#ifndef SHARDPLAN_CORE_DIAGNOSTICS_SINK_H_
#define SHARDPLAN_CORE_DIAGNOSTICS_SINK_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/diagnostics/codes.h"

namespace shardplan {

// Where a finding is: the module's FQN ("" is the root), the parameter's
// full name and the JSON pointer of the declaration at fault, each when
// known. Views: they are copied when the diagnostic is made. (The
// initializers keep GCC from warning of the places a designated
// initializer leaves out.)
struct Where {
  std::optional<std::string_view> fqn = std::nullopt;
  std::optional<std::string_view> parameter = std::nullopt;
  std::optional<std::string_view> pointer = std::nullopt;
};

// What the engine runs: `check` (the reference's verdict) or `plan`. A few
// findings are errors in the one and warnings in the other (the table's
// severity and check_severity).
enum class Mode { kCheck, kPlan };

// One argument of a message: a text, or a list of texts ("{N!l}").
class MessageArg {
 public:
  MessageArg(std::string_view text) : text_(text) {}  // NOLINT: implicit, like a format argument
  MessageArg(const std::string& text) : text_(text) {}  // NOLINT
  MessageArg(const char* text) : text_(text) {}  // NOLINT
  MessageArg(const std::vector<std::string_view>& list) : list_(&list) {}  // NOLINT

  std::string_view text() const { return text_; }
  // The list, or null for a text.
  const std::vector<std::string_view>* list() const { return list_; }

 private:
  std::string_view text_;
  const std::vector<std::string_view>* list_ = nullptr;
};

// The message of `code`: its format with `args` in place.
std::string FormatMessage(Code code, std::initializer_list<MessageArg> args);

// The diagnostic `code` at `where`, with the severity the table gives it in
// `mode`.
Diagnostic MakeDiagnostic(Code code, Mode mode, const Where& where, std::initializer_list<MessageArg> args);

// Collects diagnostics in evaluation order.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(Mode mode = Mode::kCheck) : mode_(mode) {}

  template <typename... Args>
  void Report(Code code, const Where& where, const Args&... args) {
    diagnostics_.push_back(MakeDiagnostic(code, mode_, where, {MessageArg(args)...}));
  }

  // Appends every diagnostic of `other`, in order.
  void Append(DiagnosticSink&& other);

  Mode mode() const { return mode_; }
  // Whether some diagnostic is an error.
  bool has_errors() const;
  std::vector<Diagnostic> Take() { return std::move(diagnostics_); }
  // Leaves no diagnostic, keeping the storage.
  void Clear() { diagnostics_.clear(); }

 private:
  Mode mode_;
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTICS_SINK_H_

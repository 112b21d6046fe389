// Reporting diagnostics: a checker names the code of the table
// (core/diagnostics/codes.h), where the finding is and the message's
// arguments; the sink spells the rest.
//
//   sink.Report(Code::kSharedConflict, {.fqn = fqn, .parameter = full, .pointer = pointer}, full);
#ifndef SHARDPLAN_CORE_DIAGNOSTICS_SINK_H_
#define SHARDPLAN_CORE_DIAGNOSTICS_SINK_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/diagnostic.h"
#include "core/diagnostics/codes.h"

namespace shardplan {

// Where a finding is: the module's FQN ("" is the root), the parameter's
// full name and the JSON pointer of the declaration at fault, each when
// known (views, copied when the diagnostic is made); and what would fix it,
// when known (shared with the diagnostic). (The initializers keep GCC from
// warning of the places a designated initializer leaves out.)
struct Where {
  std::optional<std::string_view> fqn = std::nullopt;
  std::optional<std::string_view> parameter = std::nullopt;
  std::optional<std::string_view> pointer = std::nullopt;
  std::shared_ptr<const FixIt> fix_it = nullptr;
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

// Collects diagnostics in evaluation order, and their groups (same code,
// same pointer; DiagnosticGroup). With `per_group` > 0 it keeps only the
// first `per_group` diagnostics of each group and counts the others without
// making them, so that a storm of findings from one declaration costs a
// count, not memory; 0 keeps every diagnostic. The first diagnostic of each
// group is always kept, so the first diagnostic overall and has_errors()
// are those of the full list. With a `stream`, each diagnostic it keeps goes
// there at once instead, and it holds none.
class DiagnosticSink {
 public:
  explicit DiagnosticSink(Mode mode = Mode::kCheck, size_t per_group = 0, DiagnosticStream* stream = nullptr)
      : mode_(mode), per_group_(per_group), stream_(stream) {}

  template <typename... Args>
  void Report(Code code, const Where& where, const Args&... args) {
    if (counting() && !Admit(GroupOf(code, where.pointer))) return;
    Keep(MakeDiagnostic(code, mode_, where, {MessageArg(args)...}));
  }

  // Appends every diagnostic of `other`, in order, keeping and counting as
  // Report does. `other` has no stream and keeps every diagnostic, or as
  // many per group as this sink (a chunk's sink made with this one's mode
  // and per_group).
  void Append(DiagnosticSink&& other);

  Mode mode() const { return mode_; }
  size_t per_group() const { return per_group_; }
  // Whether some diagnostic is an error.
  bool has_errors() const { return errors_; }
  // The kept diagnostics (none with a stream) and every group, and leaves
  // the sink empty.
  std::vector<Diagnostic> Take(std::vector<DiagnosticGroup>& groups);
  // The kept diagnostics (for a sink that keeps every one: all of them).
  std::vector<Diagnostic> Take() {
    std::vector<DiagnosticGroup> groups;
    return Take(groups);
  }
  // Leaves no diagnostic, keeping the storage.
  void Clear();

 private:
  // Whether groups are counted as diagnostics come (capped or streamed)
  // rather than once, by Take.
  bool counting() const { return per_group_ != 0 || stream_ != nullptr; }
  // Counts a diagnostic in its group `g`; whether to keep it (then listed
  // in `g`).
  bool Admit(DiagnosticGroup& g);
  void Keep(Diagnostic&& d);
  // The group of `code` at `pointer`, made (with `severity`) when new.
  DiagnosticGroup& GroupOf(std::string_view code, Severity severity, const std::optional<std::string_view>& pointer);
  DiagnosticGroup& GroupOf(Code code, const std::optional<std::string_view>& pointer);

  Mode mode_;
  size_t per_group_;
  DiagnosticStream* stream_;
  std::vector<Diagnostic> diagnostics_;  // without a stream
  size_t kept_ = 0;                      // in diagnostics_ or streamed
  bool errors_ = false;                  // some kept diagnostic is an error
  // Only when counting(): the groups so far in order of their first
  // diagnostic (listed: the kept ones), found by their key (GroupKey).
  std::vector<DiagnosticGroup> groups_;
  absl::flat_hash_map<std::string, size_t> group_index_;
  std::string key_;  // GroupKey's buffer
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTICS_SINK_H_

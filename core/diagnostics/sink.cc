#include "core/diagnostics/sink.h"

#include <iterator>

#include "core/text/pyrepr.h"

namespace shardplan {

std::string FormatMessage(Code code, std::initializer_list<MessageArg> args) {
  // Every call passes as many arguments as its format uses.
  std::string out;
  SpellFormat(InfoOf(code).format, out, [&](std::string& spelled, size_t n, char conversion) {
    const MessageArg& arg = args.begin()[n];
    if (conversion == 'l') {
      spelled += PyReprList(*arg.list());
    } else if (conversion == 'r') {
      spelled += PyRepr(arg.text());
    } else {
      spelled += arg.text();
    }
  });
  return out;
}

namespace {

Severity SeverityIn(const CodeInfo& info, Mode mode) {
  return mode == Mode::kPlan ? info.severity : info.check_severity;
}

}  // namespace

Diagnostic MakeDiagnostic(Code code, Mode mode, const Where& where, std::initializer_list<MessageArg> args) {
  const CodeInfo& info = InfoOf(code);
  Diagnostic d;
  d.code = std::string(info.name);
  d.severity = SeverityIn(info, mode);
  d.message = FormatMessage(code, args);
  if (where.fqn) d.fqn = std::string(*where.fqn);
  if (where.parameter) d.parameter = std::string(*where.parameter);
  if (where.pointer) d.pointer = std::string(*where.pointer);
  d.fix_it = where.fix_it;
  return d;
}

DiagnosticGroup& DiagnosticSink::GroupOf(std::string_view code, Severity severity,
                                         const std::optional<std::string_view>& pointer) {
  // The code, a NUL (no code has one), then 'p' and the pointer or 'n' for
  // none: "" is a pointer (the document's root).
  key_.assign(code);
  key_ += '\0';
  if (pointer) {
    key_ += 'p';
    key_ += *pointer;
  } else {
    key_ += 'n';
  }
  const auto [it, added] = group_index_.try_emplace(key_, groups_.size());
  if (added) {
    DiagnosticGroup& g = groups_.emplace_back();
    g.code = std::string(code);
    g.severity = severity;
    if (pointer) g.pointer = std::string(*pointer);
  }
  return groups_[it->second];
}

DiagnosticGroup& DiagnosticSink::GroupOf(Code code, const std::optional<std::string_view>& pointer) {
  const CodeInfo& info = InfoOf(code);
  return GroupOf(info.name, SeverityIn(info, mode_), pointer);
}

bool DiagnosticSink::Admit(DiagnosticGroup& g) {
  ++g.count;
  if (per_group_ != 0 && g.listed.size() >= per_group_) return false;
  g.listed.push_back(kept_);
  return true;
}

void DiagnosticSink::Keep(Diagnostic&& d) {
  errors_ = errors_ || d.severity == Severity::kError;
  ++kept_;
  if (stream_ != nullptr) {
    stream_->Write(d);
  } else {
    diagnostics_.push_back(std::move(d));
  }
}

void DiagnosticSink::Append(DiagnosticSink&& other) {
  if (!counting()) {
    if (diagnostics_.empty()) {
      diagnostics_ = std::move(other.diagnostics_);
    } else {
      diagnostics_.insert(diagnostics_.end(), std::make_move_iterator(other.diagnostics_.begin()),
                          std::make_move_iterator(other.diagnostics_.end()));
    }
    kept_ = diagnostics_.size();
    errors_ = errors_ || other.errors_;
  } else {
    for (Diagnostic& d : other.diagnostics_) {
      if (Admit(GroupOf(d.code, d.severity, d.pointer))) Keep(std::move(d));
    }
    // What a capped `other` counted without keeping; each of its groups
    // kept its first diagnostic, so the group is here now.
    for (const DiagnosticGroup& og : other.groups_) {
      if (og.count > og.listed.size()) GroupOf(og.code, og.severity, og.pointer).count += og.count - og.listed.size();
    }
  }
  other.Clear();
}

std::vector<Diagnostic> DiagnosticSink::Take(std::vector<DiagnosticGroup>& groups) {
  if (!counting()) {
    for (size_t i = 0; i < diagnostics_.size(); ++i) {
      const Diagnostic& d = diagnostics_[i];
      DiagnosticGroup& g = GroupOf(d.code, d.severity, d.pointer);
      ++g.count;
      g.listed.push_back(i);
    }
  }
  groups = std::move(groups_);
  std::vector<Diagnostic> diagnostics = std::move(diagnostics_);
  Clear();
  return diagnostics;
}

void DiagnosticSink::Clear() {
  diagnostics_.clear();
  kept_ = 0;
  errors_ = false;
  groups_.clear();
  group_index_.clear();
}

}  // namespace shardplan

#include "cli/text_output.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace shardplan::cli {
namespace {

// ANSI styles, or nothing without color.
class Paint {
 public:
  explicit Paint(bool color) : color_(color) {}
  std::string operator()(std::string_view style, std::string_view text) const {
    return color_ ? absl::StrCat("\x1b[", style, "m", text, "\x1b[0m") : std::string(text);
  }

 private:
  bool color_;
};

constexpr std::string_view kBold = "1", kBlue = "1;34";

std::string_view SeverityStyle(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "1;31";
    case Severity::kWarning:
      return "1;33";
    case Severity::kInfo:
      return "1;36";
  }
  return kBold;
}

// A pointer as the text names it.
std::string_view Place(std::string_view pointer) { return pointer.empty() ? "the document's root" : pointer; }

std::string Plural(size_t n, std::string_view one, std::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

std::string Bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", b, units[u]);
  return buf;
}

// The training memory: the spread over devices, then the worst device's
// breakdown with a stacked bar against the device's memory.
void PrintTraining(std::ostream& out, const TrainingView& view) {
  const TrainingReport& t = *view.report;
  const TrainingBreakdown& w = t.worst;
  out << "training memory per device: min " << Bytes(static_cast<double>(t.min_total_bytes)) << ", mean "
      << Bytes(t.mean_total_bytes) << ", max " << Bytes(static_cast<double>(t.max_total_bytes)) << "\n";
  std::string where = absl::StrCat("device ", w.device);
  if (!view.axes.empty()) {
    std::vector<std::string> coordinates;
    for (size_t j = 0; j < view.axes.size(); ++j) coordinates.push_back(absl::StrCat(view.axes[j], "=", w.coordinates[j]));
    absl::StrAppend(&where, " (", absl::StrJoin(coordinates, ", "), ")");
  }
  out << "  worst: " << where;
  if (view.device_memory) out << " of " << Bytes(static_cast<double>(*view.device_memory));
  out << "\n";
  struct Category {
    std::string_view name;
    uint64_t bytes;
    char mark;
  };
  const Category categories[] = {{"params", w.params, '#'},     {"grads", w.grads, '='},
                                 {"master", w.master, '+'},     {"optimizer", w.optimizer, '%'},
                                 {"gathered", w.gathered, '~'}, {"activations", w.activations, '*'}};
  // The bar spans the device's memory (or the total without one); each
  // category fills its share with its mark.
  constexpr int kWidth = 50;
  const double scale = static_cast<double>(std::max<uint64_t>(view.device_memory.value_or(w.total), w.total));
  std::string bar;
  double filled = 0;
  for (const auto& [name, bytes, mark] : categories) {
    char label[64];
    std::snprintf(label, sizeof label, "    %c %-12s %12s\n", mark, std::string(name).c_str(),
                  Bytes(static_cast<double>(bytes)).c_str());
    out << label;
    if (scale > 0) {
      filled += static_cast<double>(bytes);
      const size_t upto = static_cast<size_t>(filled / scale * kWidth + 0.5);
      bar.append(upto > bar.size() ? upto - bar.size() : 0, mark);
    }
  }
  char label[64];
  std::snprintf(label, sizeof label, "      %-12s %12s", "total", Bytes(static_cast<double>(w.total)).c_str());
  out << label;
  if (view.device_memory && *view.device_memory > 0) {
    std::snprintf(label, sizeof label, "  (%.0f%% of device_memory)",
                  100.0 * static_cast<double>(w.total) / static_cast<double>(*view.device_memory));
    out << label;
  }
  bar.resize(std::max<size_t>(bar.size(), kWidth), '.');
  out << "\n    [" << bar << "]\n";
}

// Per-device memory (min / mean / max and a histogram over devices), the
// training memory, the collectives per axis, and the plan as a table.
void PrintPlan(std::ostream& out, const PlanView& plan, const std::optional<TrainingView>& training) {
  if (const MemoryReport* memory = plan.memory()) {
    const MemoryReport& m = *memory;
    out << "memory per device (" << m.devices << (m.devices == 1 ? " device" : " devices")
              << "): min " << Bytes(static_cast<double>(m.min_bytes)) << ", mean " << Bytes(m.mean_bytes)
              << ", max " << Bytes(static_cast<double>(m.max_bytes)) << " (device " << m.max_device
              << "); unsharded " << Bytes(static_cast<double>(m.unsharded_bytes)) << "\n";
    if (m.per_device_bytes && m.max_bytes > m.min_bytes) {
      constexpr int kBins = 8, kWidth = 40;
      std::vector<uint64_t> bins(kBins, 0);
      const double span = static_cast<double>(m.max_bytes - m.min_bytes);
      for (uint64_t b : *m.per_device_bytes) {
        const int bin = std::min(kBins - 1, static_cast<int>(static_cast<double>(b - m.min_bytes) / span * kBins));
        ++bins[bin];
      }
      const uint64_t most = *std::max_element(bins.begin(), bins.end());
      for (int i = 0; i < kBins; ++i) {
        const double lo = static_cast<double>(m.min_bytes) + span * i / kBins;
        char label[64];
        std::snprintf(label, sizeof label, "  %12s .. ", Bytes(lo).c_str());
        out << label << std::string(static_cast<size_t>(bins[i] * kWidth / most), '#') << " " << bins[i]
                  << "\n";
      }
    }
  } else {
    out << "memory per device: not computed (more than " << kMaxMemoryDevices << " devices)\n";
  }
  if (training) PrintTraining(out, *training);
  const std::vector<CollectiveTotal> collectives = plan.collectives();
  if (collectives.empty()) {
    out << "collectives: none\n";
  } else {
    out << "collectives:";
    for (const CollectiveTotal& c : collectives) {
      out << " " << c.collective << "@" << c.axis << " x" << c.count;
    }
    out << "\n";
  }
  out << "plan:\n";
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlanEntry e = plan.entry(i);
    const std::string fqn = e.fqn.empty() ? "(root)" : std::string(e.fqn);
    const std::string provenance = absl::StrJoin(*e.provenance, ", ");
    if (e.params.empty()) {
      out << "  " << fqn << "  (no parameters)  [" << provenance << "]\n";
      continue;
    }
    for (const PlannedParameter& p : e.params) {
      std::string placements;
      for (const auto& [axis, placement] : p.placements) {
        absl::StrAppend(&placements, placements.empty() ? "" : " ", axis, "=", placement);
      }
      out << "  " << fqn << "  " << p.name << "  " << (placements.empty() ? "-" : placements) << "  ["
                << provenance << "]\n";
    }
  }
}

}  // namespace

std::vector<size_t> ShownDiagnostics(const Result& result, const TextOptions& options) {
  const bool capped = options.max_diagnostics != 0;
  std::vector<size_t> shown;
  for (const DiagnosticGroup& g : result.groups) {
    const size_t take = capped ? std::min(g.listed.size(), kShownPerGroup) : g.listed.size();
    for (size_t k = 0; k < take; ++k) {
      if (capped && shown.size() == options.max_diagnostics) return shown;
      shown.push_back(g.listed[k]);
    }
  }
  return shown;
}

void PrintText(std::ostream& out, std::string_view path, const Result& result, const TextOptions& options,
               const std::vector<size_t>& shown, const std::vector<std::optional<TextPosition>>& positions) {
  const Paint paint(options.color);
  size_t next = 0;  // into shown
  size_t groups_left = 0, diagnostics_left = 0;
  for (const DiagnosticGroup& g : result.groups) {
    size_t printed = 0;
    const std::string* last_help = nullptr;  // the help printed last in this group
    while (next < shown.size() && printed < g.listed.size() && shown[next] == g.listed[printed]) {
      const Diagnostic& d = result.diagnostics[shown[next]];
      const std::string_view style = SeverityStyle(d.severity);
      out << paint(style, absl::StrCat(SeverityName(d.severity), "[", d.code, "]")) << ": " << paint(kBold, d.message)
          << "\n"
          << "  " << paint(kBlue, "-->") << " " << path;
      if (const std::optional<TextPosition>& at = positions[next]) out << ":" << at->line << ":" << at->column;
      if (d.pointer) out << " at " << Place(*d.pointer);
      out << "\n";
      // A group's instances often share their help: said once.
      if (d.fix_it && (last_help == nullptr || *last_help != d.fix_it->help)) {
        out << "  " << paint(kBlue, "=") << " " << paint(kBold, "help") << ": " << d.fix_it->help << "\n";
        last_help = &d.fix_it->help;
      }
      ++printed;
      ++next;
    }
    if (printed == 0) {
      ++groups_left;
      diagnostics_left += g.count;
    } else if (g.count > printed) {
      out << "  " << paint(kBlue, "...") << " and " << (g.count - printed) << " more";
      if (g.pointer) out << " at " << Place(*g.pointer);
      out << " (" << g.count << " " << g.code << " in all)\n";
    }
  }
  if (groups_left > 0) {
    out << paint(kBlue, "...") << " " << Plural(diagnostics_left, "more diagnostic", "more diagnostics") << " in "
        << Plural(groups_left, "group", "groups") << " not shown (--max-diagnostics 0 shows every one)\n";
  }

  // The summary: errors and warnings, and per code.
  size_t errors = 0, warnings = 0, total = 0;
  for (const DiagnosticGroup& g : result.groups) {
    errors += g.severity == Severity::kError ? g.count : 0;
    warnings += g.severity == Severity::kWarning ? g.count : 0;
    total += g.count;
  }
  out << path << ": ";
  if (const std::optional<OwnershipCounts> counts = CountOwnership(result)) {
    out << paint("1;32", "ok") << ": " << Plural(counts->owners, "owner", "owners") << ", "
        << Plural(counts->owned_names, "owned parameter name", "owned parameter names") << ", "
        << Plural(counts->aliases, "alias", "aliases");
    if (warnings > 0) out << ", " << Plural(warnings, "warning", "warnings");
  } else {
    out << Plural(errors, "error", "errors");
    if (warnings > 0) out << ", " << Plural(warnings, "warning", "warnings");
  }
  if (total > 1) {
    out << " ("
        << absl::StrJoin(CountByCode(result), ", ",
                         [](std::string* s, const auto& c) { absl::StrAppend(s, c.second, " ", c.first); })
        << ")";
  }
  if (options.werror && result.ok && warnings > 0) {
    out << "; " << paint("1;31", "failed") << ": warnings are errors (--werror)";
  }
  out << "\n";
  const std::optional<TrainingView> training = TrainingOf(result);
  if (const std::optional<PlanView> plan = PlanOf(result)) {
    PrintPlan(out, *plan, training);
  } else if (training) {
    PrintTraining(out, *training);  // a document's own plan
  }
}

}  // namespace shardplan::cli

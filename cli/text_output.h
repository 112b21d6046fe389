// The CLI's text output: diagnostics grouped by cause, the summary line and
// a plan's memory, collectives and table.
#ifndef SHARDPLAN_CLI_TEXT_OUTPUT_H_
#define SHARDPLAN_CLI_TEXT_OUTPUT_H_

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/locate.h"
#include "core/result.h"

namespace shardplan::cli {

// How many diagnostics of a group the text shows (CheckOptions::
// instances_per_group when the output is capped).
inline constexpr size_t kShownPerGroup = 3;

struct TextOptions {
  bool color = false;  // ANSI colors (the caller decides: --color, NO_COLOR, a terminal)
  // At most this many diagnostics are shown, 0 for all.
  size_t max_diagnostics = 50;
  bool werror = false;  // warnings fail the document (the summary says so)
};

// The diagnostics PrintText shows, as indexes into result.diagnostics, in
// the order it shows them: group by group in the order of each group's
// first diagnostic, at most kShownPerGroup of a group when the output is
// capped, at most options.max_diagnostics in all.
std::vector<size_t> ShownDiagnostics(const Result& result, const TextOptions& options);

// Prints the diagnostics `shown` (ShownDiagnostics(result, options);
// `positions`: for each of them, where its pointer is in the document, when
// known), each group's count of those not shown, what was left out, the
// summary line (with the count per code) and, for a planned result, the plan.
void PrintText(std::ostream& out, std::string_view path, const Result& result, const TextOptions& options,
               const std::vector<size_t>& shown, const std::vector<std::optional<TextPosition>>& positions);

}  // namespace shardplan::cli

#endif  // SHARDPLAN_CLI_TEXT_OUTPUT_H_

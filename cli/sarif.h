// The CLI's SARIF 2.1.0 output (--format sarif): one log with one run for
// every document of the command, as code-scanning tools read it (GitHub's
// upload-sarif, IDE viewers).
#ifndef SHARDPLAN_CLI_SARIF_H_
#define SHARDPLAN_CLI_SARIF_H_

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/locate.h"
#include "core/result.h"

namespace shardplan::cli {

class SarifLog {
 public:
  // `plan`: the run is `shardplan plan` (the rules' default levels are
  // plan's severities, else check's).
  explicit SarifLog(bool plan) : plan_(plan) {}

  // The diagnostics of `result` whose indexes are `shown` (ShownDiagnostics),
  // at `positions` (one per shown diagnostic) in the document at `path`.
  void Add(std::string_view path, const Result& result, const std::vector<size_t>& shown,
           const std::vector<std::optional<TextPosition>>& positions);

  // The log as compact JSON and a newline.
  void Write(std::ostream& out) const;

 private:
  struct Finding {
    Diagnostic diagnostic;
    size_t artifact;  // index into artifacts_
    std::optional<TextPosition> position;
    size_t group_count;  // diagnostics with its cause, shown or not
  };
  bool plan_;
  std::vector<std::string> artifacts_;  // the documents' paths, "-" for standard input
  std::vector<Finding> findings_;
};

// `path` as a SARIF artifact URI: a relative reference for a relative path,
// a file: URI for an absolute one, percent-encoding what a URI cannot hold.
std::string ArtifactUri(std::string_view path);

}  // namespace shardplan::cli

#endif  // SHARDPLAN_CLI_SARIF_H_

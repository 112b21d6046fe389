// shardplan: check sharding plans from the command line.
//
//   shardplan check [OPTIONS] DOC...
//   shardplan plan  [OPTIONS] DOC...
//   shardplan --version
//
// Exit status: 0 when no document has an error, 1 when one has (or a
// warning, with --werror), 2 for usage errors and unreadable files.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "cli/sarif.h"
#include "cli/text_output.h"
#include "core/engine.h"
#include "core/locate.h"
#include "core/suggest.h"
#include "shardplan/shardplan.h"

// The last document's result, kept until exit: the system reclaims its
// memory at once, where freeing a large model's millions of allocations one
// by one takes about 5% of a run. A global with external linkage, so that
// the store is never optimized away and leak checkers see it reachable.
const shardplan::Result* kept_result = nullptr;

namespace {

constexpr std::string_view kUsage =
    "usage: shardplan check [OPTIONS] DOC...\n"
    "       shardplan plan  [OPTIONS] DOC...\n"
    "       shardplan --version\n"
    "\n"
    "check: checks module-owned sharding layouts of shardplan.v1 documents (and a\n"
    "final plan when the document has one) and reports every problem at once.\n"
    "plan: also makes the final plan from the owners, the document's templates and\n"
    "overrides, checks it and its shapes, and reports per-device memory and the\n"
    "collectives it implies. DOC may be '-' for standard input.\n"
    "\n"
    "  --format text       compiler-style diagnostics, grouped by cause, and a\n"
    "                      summary line (default)\n"
    "  --format json       the result object, one JSON object per line per document\n"
    "  --format sarif      one SARIF 2.1.0 log for all documents, for code scanning\n"
    "  --max-diagnostics N show at most N diagnostics, at most 3 of each group (same\n"
    "                      code at the same declaration), the rest counted; 0 shows\n"
    "                      every one (default: 50 for text, 1000 for sarif, 0 for\n"
    "                      json)\n"
    "  --color WHEN        auto (default: when standard output is a terminal and\n"
    "                      NO_COLOR is not set), always or never\n"
    "  --werror            warnings fail the document (exit status 1)\n"
    "  --max-paths N       refuse documents whose module tree has more than N paths\n"
    "                      (default 10000000)\n"
    "  --threads N         worker threads, 0 for all cores (default: all cores);\n"
    "                      results are the same for every thread count\n"
    "\n"
    "Exit status: 0 no errors, 1 a document has errors, 2 usage or I/O error.\n";

int Usage(std::string_view problem) {
  std::cerr << "shardplan: " << problem << "\n\n" << kUsage;
  return 2;
}

// A document's text: a regular file is mapped (read-only, its pages mapped
// from the page cache up front), which spares copying it and faulting in a
// buffer of its size; standard input, pipes and devices are read to their
// end. Release() lets the text go: the engine calls it once the document is
// parsed.
class Input {
 public:
  Input() = default;
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;
  ~Input() { Release(); }

  bool Open(const std::string& path, std::string& error) {
    if (path == "-") {
      if (ReadFd(STDIN_FILENO)) return true;
      error = absl::StrCat("cannot read standard input: ", std::strerror(errno));
      return false;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      error = absl::StrCat("cannot read '", path, "': ", std::strerror(errno));
      if (fd >= 0) ::close(fd);
      return false;
    }
    bool ok = true;
    if (S_ISDIR(st.st_mode)) {
      error = absl::StrCat("cannot read '", path, "': it is a directory");
      ok = false;
    } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
      void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (map != MAP_FAILED) {
        map_ = map;
        map_size_ = static_cast<size_t>(st.st_size);
      } else {
        ok = ReadFd(fd);  // a file system that cannot map
      }
    } else {
      ok = ReadFd(fd);  // empty (or a /proc file that says so), a pipe or a device
    }
    if (!ok && error.empty()) error = absl::StrCat("cannot read '", path, "': ", std::strerror(errno));
    ::close(fd);
    return ok;
  }

  std::string_view text() const {
    return map_ != nullptr ? std::string_view(static_cast<const char*>(map_), map_size_) : std::string_view(text_);
  }

  void Release() {
    if (map_ != nullptr) ::munmap(map_, map_size_);
    map_ = nullptr;
    std::string().swap(text_);
  }

 private:
  bool ReadFd(int fd) {
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n == 0) return true;
      if (n > 0) {
        text_.append(buf, static_cast<size_t>(n));
      } else if (errno != EINTR) {
        return false;
      }
    }
  }

  std::string text_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
};

// Matches `--name VALUE` (advancing i) or `--name=VALUE`; a missing value
// leaves `value` empty.
bool OptionValue(const std::vector<std::string>& args, size_t& i, std::string_view name, std::string& value) {
  const std::string& arg = args[i];
  if (arg == name) {
    value = i + 1 < args.size() ? args[++i] : "";
    return true;
  }
  if (arg.size() > name.size() && arg.compare(0, name.size(), name) == 0 && arg[name.size()] == '=') {
    value = arg.substr(name.size() + 1);
    return true;
  }
  return false;
}

// "; did you mean 'X'?" for the known word nearest to `word`, or "".
std::string DidYouMean(std::string_view word, absl::Span<const std::string_view> known) {
  shardplan::NearestName near(word);
  for (std::string_view k : known) near.Consider(k);
  return near.best() ? absl::StrCat("; did you mean '", *near.best(), "'?") : "";
}

constexpr std::string_view kOptions[] = {
    "--format", "--max-diagnostics", "--color", "--werror", "--max-paths", "--threads", "--help", "--version"};

std::string Version() {
  return absl::StrCat("shardplan ", SP_VERSION_MAJOR, ".", SP_VERSION_MINOR, ".", SP_VERSION_PATCH, " (C ABI ",
                      SP_ABI_VERSION, ")\n");
}

// Where the diagnostics `shown` point in the document: in `held`'s text
// when the caller still holds it (standard input), else in the file read
// again (not at all when none of them has a pointer).
std::vector<std::optional<shardplan::TextPosition>> Positions(const std::string& path, const Input& held,
                                                              const shardplan::Result& result,
                                                              const std::vector<size_t>& shown) {
  std::vector<std::string_view> pointers;
  bool any = false;
  for (size_t i : shown) {
    const std::optional<std::string>& pointer = result.diagnostics[i].pointer;
    pointers.push_back(pointer ? std::string_view(*pointer) : std::string_view("-"));  // "-" locates nothing
    any = any || pointer.has_value();
  }
  if (any && !held.text().empty()) return shardplan::LocatePointers(held.text(), pointers);
  Input again;
  std::string error;
  if (any && path != "-" && again.Open(path, error)) return shardplan::LocatePointers(again.text(), pointers);
  return std::vector<std::optional<shardplan::TextPosition>>(shown.size());
}

// `check` or `plan` (the same options).
int Run(bool plan, const std::vector<std::string>& args) {
  std::string format = "text";
  std::optional<size_t> max_diagnostics;
  std::string color = "auto";
  bool werror = false;
  shardplan::CheckOptions options;
  std::vector<std::string> docs;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    std::string value;
    if (OptionValue(args, i, "--format", value)) {
      if (value.empty()) return Usage("--format needs a value");
      format = value;
      if (format != "text" && format != "json" && format != "sarif") {
        return Usage(absl::StrCat("unknown format '", format, "'", DidYouMean(format, {"text", "json", "sarif"})));
      }
    } else if (OptionValue(args, i, "--max-diagnostics", value)) {
      size_t n = 0;
      if (!absl::SimpleAtoi(value, &n)) {
        return Usage(absl::StrCat("--max-diagnostics needs a non-negative integer, got '", value, "'"));
      }
      max_diagnostics = n;
    } else if (OptionValue(args, i, "--color", value)) {
      if (value != "auto" && value != "always" && value != "never") {
        return Usage(absl::StrCat("--color needs auto, always or never, got '", value, "'",
                                  DidYouMean(value, {"auto", "always", "never"})));
      }
      color = value;
    } else if (arg == "--werror") {
      werror = true;
    } else if (OptionValue(args, i, "--max-paths", value)) {
      if (!absl::SimpleAtoi(value, &options.limits.max_paths) || options.limits.max_paths == 0) {
        return Usage(absl::StrCat("--max-paths needs a positive integer, got '", value, "'"));
      }
    } else if (OptionValue(args, i, "--threads", value)) {
      if (!absl::SimpleAtoi(value, &options.threads) || options.threads < 0) {
        return Usage(absl::StrCat("--threads needs a non-negative integer, got '", value, "'"));
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      const std::string_view name = std::string_view(arg).substr(0, arg.find('='));
      return Usage(absl::StrCat("unknown option '", arg, "'", DidYouMean(name, kOptions)));
    } else {
      docs.push_back(arg);
    }
  }
  if (docs.empty()) return Usage("no document given");

  shardplan::cli::TextOptions text;
  text.max_diagnostics = max_diagnostics.value_or(format == "text" ? 50 : format == "sarif" ? 1000 : 0);
  text.werror = werror;
  const char* no_color = std::getenv("NO_COLOR");
  text.color = color == "always" ||
               (color == "auto" && ::isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0'));
  // A capped output needs only the first few of each group: the engine
  // counts the others without making them.
  if (text.max_diagnostics != 0) options.instances_per_group = shardplan::cli::kShownPerGroup;

  shardplan::cli::SarifLog sarif(plan);
  int status = 0;
  for (const std::string& path : docs) {
    Input input;
    std::string error;
    if (!input.Open(path, error)) {
      std::cout.flush();
      std::cerr << "shardplan: " << error << "\n";
      status = 2;
      continue;
    }
    // The engine lets the text go once parsed; standard input, which cannot
    // be read again, is kept for the line numbers of text and SARIF.
    const bool keep = format != "json" && path == "-";
    const std::function<void()> release = [&input, keep] {
      if (!keep) input.Release();
    };
    // JSON is written as the engine goes: each diagnostic as it is made.
    std::optional<shardplan::ResultJsonWriter> json;
    if (format == "json") options.stream = &json.emplace(std::cout, text.max_diagnostics);
    absl::StatusOr<shardplan::Result> result = plan ? shardplan::PlanText(input.text(), release, options)
                                                    : shardplan::CheckText(input.text(), release, options);
    if (!result.ok()) {
      std::cerr << "shardplan: " << result.status().message() << "\n";
      status = 2;
      continue;
    }
    if (format == "json") {
      json->Finish(*result);
      std::cout << "\n";
    } else {
      const std::vector<size_t> shown = shardplan::cli::ShownDiagnostics(*result, text);
      // A failed check's text needs only the diagnostics: what the engine
      // found goes before the document is read again for the line numbers,
      // so that the two are not held at once.
      if (!result->ok && !shardplan::PlanOf(*result)) result->outcome.reset();
      const std::vector<std::optional<shardplan::TextPosition>> at = Positions(path, input, *result, shown);
      if (format == "sarif") {
        sarif.Add(path, *result, shown, at);
      } else {
        shardplan::cli::PrintText(std::cout, path, *result, text, shown, at);
      }
    }
    const bool failed = !result->ok || (werror && std::any_of(result->groups.begin(), result->groups.end(),
                                                              [](const shardplan::DiagnosticGroup& g) {
                                                                return g.severity == shardplan::Severity::kWarning;
                                                              }));
    if (failed && status == 0) status = 1;
    if (&path == &docs.back()) kept_result = new shardplan::Result(*std::move(result));
  }
  if (format == "sarif") sarif.Write(std::cout);
  std::cout.flush();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage("no command given");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::cout << Version();
    return 0;
  }
  if (args[0] == "check" || args[0] == "plan") return Run(args[0] == "plan", {args.begin() + 1, args.end()});
  return Usage(absl::StrCat("unknown command '", args[0], "'",
                            DidYouMean(args[0], {"check", "plan", "--version", "--help"})));
}

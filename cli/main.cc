// shardplan: check sharding plans from the command line.
//
//   shardplan check [--format text|json] [--max-paths N] [--threads N] DOC...
//   shardplan plan  [--format text|json] [--max-paths N] [--threads N] DOC...
//
// Exit status: 0 when no document has an error, 1 when one has, 2 for usage
// errors and unreadable files.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/engine.h"

// The last document's result, kept until exit: the system reclaims its
// memory at once, where freeing a large model's millions of allocations one
// by one takes about 5% of a run. A global with external linkage, so that
// the store is never optimized away and leak checkers see it reachable.
const shardplan::Result* kept_result = nullptr;

namespace {

constexpr std::string_view kUsage =
    "usage: shardplan check [--format text|json] [--max-paths N] [--threads N] DOC...\n"
    "       shardplan plan  [--format text|json] [--max-paths N] [--threads N] DOC...\n"
    "\n"
    "check: checks module-owned sharding layouts of shardplan.v1 documents (and a\n"
    "final plan when the document has one) and reports every problem at once.\n"
    "plan: also makes the final plan from the owners, the document's templates and\n"
    "overrides, checks it and its shapes, and reports per-device memory and the\n"
    "collectives it implies. DOC may be '-' for standard input.\n"
    "\n"
    "  --format text   compiler-style diagnostics and a summary line (default)\n"
    "  --format json   the result object, one JSON object per line per document\n"
    "  --max-paths N   refuse documents whose module tree has more than N paths\n"
    "                  (default 10000000)\n"
    "  --threads N     worker threads, 0 for all cores (default: all cores);\n"
    "                  results are the same for every thread count\n"
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
      error = "error reading standard input";
      return false;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0) {
      error = absl::StrCat("cannot read '", path, "'");
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
    ::close(fd);
    if (!ok && error.empty()) error = absl::StrCat("error reading '", path, "'");
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

// Per-device memory (min / mean / max and a histogram over devices), the
// collectives per axis, and the plan as a table.
void PrintPlan(const shardplan::PlanView& plan) {
  if (const shardplan::MemoryReport* memory = plan.memory()) {
    const shardplan::MemoryReport& m = *memory;
    std::cout << "memory per device (" << m.devices << (m.devices == 1 ? " device" : " devices")
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
        std::cout << label << std::string(static_cast<size_t>(bins[i] * kWidth / most), '#') << " " << bins[i]
                  << "\n";
      }
    }
  } else {
    std::cout << "memory per device: not computed (more than " << shardplan::kMaxMemoryDevices << " devices)\n";
  }
  const std::vector<shardplan::CollectiveTotal> collectives = plan.collectives();
  if (collectives.empty()) {
    std::cout << "collectives: none\n";
  } else {
    std::cout << "collectives:";
    for (const shardplan::CollectiveTotal& c : collectives) {
      std::cout << " " << c.collective << "@" << c.axis << " x" << c.count;
    }
    std::cout << "\n";
  }
  std::cout << "plan:\n";
  for (size_t i = 0; i < plan.size(); ++i) {
    const shardplan::PlanEntry e = plan.entry(i);
    const std::string fqn = e.fqn.empty() ? "(root)" : std::string(e.fqn);
    const std::string provenance = absl::StrJoin(*e.provenance, ", ");
    if (e.params.empty()) {
      std::cout << "  " << fqn << "  (no parameters)  [" << provenance << "]\n";
      continue;
    }
    for (const shardplan::PlannedParameter& p : e.params) {
      std::string placements;
      for (const auto& [axis, placement] : p.placements) {
        absl::StrAppend(&placements, placements.empty() ? "" : " ", axis, "=", placement);
      }
      std::cout << "  " << fqn << "  " << p.name << "  " << (placements.empty() ? "-" : placements) << "  ["
                << provenance << "]\n";
    }
  }
}

void PrintText(const std::string& path, const shardplan::Result& result) {
  size_t errors = 0, warnings = 0;
  for (const shardplan::Diagnostic& d : result.diagnostics) {
    errors += d.severity == shardplan::Severity::kError;
    warnings += d.severity == shardplan::Severity::kWarning;
    std::cout << shardplan::SeverityName(d.severity) << "[" << d.code << "]: " << d.message << "\n";
    std::cout << "  --> " << path;
    if (d.pointer && !d.pointer->empty()) std::cout << ":" << *d.pointer;
    std::cout << "\n";
  }
  std::cout << path << ": ";
  if (const std::optional<shardplan::OwnershipCounts> counts = shardplan::CountOwnership(result)) {
    std::cout << "ok: " << counts->owners << (counts->owners == 1 ? " owner, " : " owners, ") << counts->owned_names
              << (counts->owned_names == 1 ? " owned parameter name, " : " owned parameter names, ")
              << counts->aliases << (counts->aliases == 1 ? " alias" : " aliases");
    if (warnings > 0) std::cout << ", " << warnings << (warnings == 1 ? " warning" : " warnings");
  } else {
    std::cout << errors << (errors == 1 ? " error" : " errors");
    if (warnings > 0) std::cout << ", " << warnings << (warnings == 1 ? " warning" : " warnings");
  }
  std::cout << "\n";
  if (const std::optional<shardplan::PlanView> plan = shardplan::PlanOf(result)) PrintPlan(*plan);
}

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

// `check` or `plan` (the same options).
int Run(bool plan, const std::vector<std::string>& args) {
  std::string format = "text";
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
      if (format != "text" && format != "json") return Usage(absl::StrCat("unknown format '", format, "'"));
    } else if (OptionValue(args, i, "--max-paths", value)) {
      if (!absl::SimpleAtoi(value, &options.limits.max_paths) || options.limits.max_paths == 0) {
        return Usage(absl::StrCat("--max-paths needs a positive integer, got '", value, "'"));
      }
    } else if (OptionValue(args, i, "--threads", value)) {
      if (!absl::SimpleAtoi(value, &options.threads) || options.threads < 0) {
        return Usage(absl::StrCat("--threads needs a non-negative integer, got '", value, "'"));
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      return Usage(absl::StrCat("unknown option '", arg, "'"));
    } else {
      docs.push_back(arg);
    }
  }
  if (docs.empty()) return Usage("no document given");

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
    // The engine lets the text go once parsed.
    const std::function<void()> release = [&input] { input.Release(); };
    absl::StatusOr<shardplan::Result> result = plan ? shardplan::PlanText(input.text(), release, options)
                                                    : shardplan::CheckText(input.text(), release, options);
    if (!result.ok()) {
      std::cerr << "shardplan: " << result.status().message() << "\n";
      status = 2;
      continue;
    }
    if (format == "json") {
      shardplan::WriteResultJson(*result, std::cout);
      std::cout << "\n";
    } else {
      PrintText(path, *result);
    }
    if (!result->ok && status == 0) status = 1;
    if (&path == &docs.back()) kept_result = new shardplan::Result(*std::move(result));
  }
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
  if (args[0] == "check" || args[0] == "plan") return Run(args[0] == "plan", {args.begin() + 1, args.end()});
  return Usage(absl::StrCat("unknown command '", args[0], "'"));
}

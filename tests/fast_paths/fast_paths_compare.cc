// Checks and plans every document of the folders given, once with the
// engine's fast paths on and once with each of them off (core/fast_paths.h),
// on one thread and on two, and prints the documents whose results differ.
// Exits 0 when every result is the same, byte for byte; fails also when it
// compared fewer documents than --at-least.
//
//   fast_paths_compare --at-least 1000 DIR...
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/engine.h"
#include "core/fast_paths.h"
#include "tests/support/read_file.h"

namespace {

namespace fs = std::filesystem;
using shardplan::CheckOptions;
using shardplan::FastPaths;
using shardplan::ReadFile;

// The result JSON of checking (or planning) `text`, or the misuse message.
std::string ResultOf(const std::string& text, bool plan, int threads, const FastPaths& fast) {
  CheckOptions options;
  options.threads = threads;
  const absl::StatusOr<shardplan::Result> r =
      plan ? shardplan::PlanWith(text, options, fast) : shardplan::CheckWith(text, options, fast);
  return r.ok() ? shardplan::ResultToJson(*r) : std::string(r.status().message());
}

}  // namespace

int main(int argc, char** argv) {
  size_t at_least = 0;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--at-least" && i + 1 < argc) {
      at_least = std::strtoul(argv[++i], nullptr, 10);
      continue;
    }
    for (const auto& entry : fs::directory_iterator(arg)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  // One fast path off at a time.
  std::vector<std::pair<const char*, FastPaths>> plain;
  FastPaths no_resolution;
  no_resolution.in_order_resolution = false;
  plain.emplace_back("in_order_resolution", no_resolution);
  FastPaths no_skip;
  no_skip.skip_repeated_layouts = false;
  plain.emplace_back("skip_repeated_layouts", no_skip);
  plain.emplace_back("any fast path", FastPaths{.in_order_resolution = false, .skip_repeated_layouts = false});

  size_t differ = 0;
  for (const fs::path& file : files) {
    const std::string text = ReadFile(file).value();
    for (bool plan : {false, true}) {
      for (int threads : {1, 2}) {
        const std::string want = ResultOf(text, plan, threads, FastPaths{});
        for (const auto& [name, fast] : plain) {
          if (ResultOf(text, plan, threads, fast) == want) continue;
          ++differ;
          std::printf("DIFFERS without %s (%s, %d threads): %s\n", name, plan ? "plan" : "check", threads,
                      file.c_str());
        }
      }
    }
  }
  std::printf("%zu documents compared, %zu results differ\n", files.size(), differ);
  if (files.size() < at_least) {
    std::printf("FAIL: fewer than %zu documents\n", at_least);
    return 1;
  }
  return differ == 0 ? 0 : 1;
}

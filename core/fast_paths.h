// The engine's fast paths: code that gives the same results as the plain
// code it stands in for, kept only where it makes a large document's check
// markedly faster (docs/architecture.md names each, with its measurement).
// Tests run the engine with each one off and require the same results, byte
// for byte (tests/core/fast_paths_test).
#ifndef SHARDPLAN_CORE_FAST_PATHS_H_
#define SHARDPLAN_CORE_FAST_PATHS_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace shardplan {

struct CheckOptions;
struct Result;

struct FastPaths {
  // ModuleTree::Resolver: FQNs resolved from where the previous one led
  // (documents list modules in path order), and parameter names split into
  // interned names once; off, each is resolved from the root by name, as
  // ModuleTree::Resolve and ResolveParameter do.
  bool in_order_resolution = true;
  // json::DocumentReader: a provider or plan entry whose layout is spelled
  // byte for byte as the entry's before it (models repeat layer after layer)
  // is compared and given that layout, not read and parsed again; off, every
  // value is read and parsed.
  bool skip_repeated_layouts = true;
};

// Check() and Plan() with the fast paths `fast` leaves on.
absl::StatusOr<Result> CheckWith(std::string_view json, const CheckOptions& options, const FastPaths& fast);
absl::StatusOr<Result> PlanWith(std::string_view json, const CheckOptions& options, const FastPaths& fast);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_FAST_PATHS_H_

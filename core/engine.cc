#include "core/engine.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "core/claims.h"
#include "core/collect.h"
#include "core/layout_checks.h"
#include "core/module_tree.h"
#include "core/owners.h"
#include "core/parallel.h"
#include "core/plan_check.h"

namespace shardplan {

namespace {

Result CheckDocument(std::shared_ptr<const Document> doc) {
  Result result;
  result.document = doc;

  auto shared_tree = std::make_shared<const ModuleTree>(*doc);
  result.tree = shared_tree;
  const ModuleTree& tree = *shared_tree;
  Owners owners(doc->modules.size());
  DiagnosticSink sink;
  const bool all_added = CollectOwners(tree, owners, sink);
  CheckNesting(tree, owners, sink);
  CheckOwners(tree, owners, sink);
  Claims claims = AssignParameters(tree, owners, /*check_omissions=*/all_added, sink);
  const std::vector<Owner*> entries = owners.InOrder();
  if (!sink.has_errors() && doc->plan && !entries.empty()) {
    ValidatePlan(tree, owners, claims, *doc->plan, sink);
  }

  result.ok = !sink.has_errors();
  result.diagnostics = sink.Take();
  if (!result.ok) return result;

  Owned& owned = result.owned.emplace();
  owned.entries.reserve(entries.size());
  for (Owner* o : entries) {
    owned.entries.push_back(
        {std::string(tree.fqn(o->path)), o->kind, o->layout, o->parallel, std::move(o->derived_out_names),
         std::move(o->dropped), std::move(o->required)});
  }
  owned.owned_params = std::move(claims.owned_params);
  for (ParamId p = 0; p < claims.expected.size(); ++p) {
    if (claims.expected[p]) owned.expected.push_back(p);
  }
  owned.aliases = std::move(claims.aliases);
  return result;
}

absl::Status ValidateThreads(int threads) {
  if (threads < 0) return absl::InvalidArgumentError("threads must be 0 (all cores) or positive");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Check(std::string_view json, const CheckOptions& options) {
  if (options.limits.max_paths == 0 || options.limits.max_fqn_bytes == 0 || options.limits.max_json_depth < 1) {
    return absl::InvalidArgumentError("limits must be positive");
  }
  if (absl::Status s = ValidateThreads(options.threads); !s.ok()) return s;
  return WithThreads(options.threads, [&]() -> Result {
    ParsedDocument parsed = ParseDocument(json, options.limits);
    if (parsed.error) {
      Result result;
      result.diagnostics.push_back(std::move(*parsed.error));
      return result;
    }
    return CheckDocument(std::move(parsed.document));
  });
}

absl::StatusOr<Result> CheckParsed(std::shared_ptr<const Document> document, int threads) {
  if (document == nullptr) return absl::InvalidArgumentError("no document");
  if (absl::Status s = ValidateThreads(threads); !s.ok()) return s;
  return WithThreads(threads, [&] { return CheckDocument(std::move(document)); });
}

}  // namespace shardplan

#include "core/engine.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "core/fast_paths.h"
#include "core/outcome.h"
#include "core/model/parse.h"
#include "core/ownership/claims.h"
#include "core/ownership/collect.h"
#include "core/ownership/owner_checks.h"
#include "core/ownership/nesting.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"
#include "core/exec/parallel.h"
#include "core/planning/plan_check.h"
#include "core/planning/planner.h"
#include "core/planning/memory.h"
#include "core/planning/pipeline.h"
#include "core/planning/shapes.h"
#include "core/planning/training.h"
#include "core/text/utf8.h"
#include "core/diagnostics/codes.h"

namespace shardplan {

namespace {

// The ownership stages shared by check and plan (spec section 4).
struct Ownership {
  explicit Ownership(const ModuleTree& tree) : owners(tree.doc().modules.size()) {}
  Owners owners;
  Claims claims;
};

void CheckOwnership(const ModuleTree& tree, Ownership& o, DiagnosticSink& sink) {
  const bool all_added = CollectOwners(tree, o.owners, sink);
  CheckNesting(tree, o.owners, sink);
  CheckOwners(tree, o.owners, sink);
  o.claims = AssignParameters(tree, o.owners, /*check_omissions=*/all_added, sink);
}

// What a successful ownership check found beyond the owners (moves out of
// it).
Owned TakeOwned(Ownership& o) {
  Owned owned;
  owned.owned.resize(o.claims.placement.size());
  for (ParamId p = 0; p < o.claims.placement.size(); ++p) owned.owned[p] = o.claims.owned(p);
  owned.expected.reserve(o.claims.expected_count);
  for (ParamId p = 0; p < o.claims.expected.size(); ++p) {
    if (o.claims.expected[p]) owned.expected.push_back(p);
  }
  owned.canonical = std::move(o.claims.canonical);
  owned.aliases = std::move(o.claims.aliases);
  return owned;
}

// Keeps the owners as collected and what claims made of their params, passed
// or not: the result's owners (OwnersOf) read them.
void TakeOwners(Ownership& o, Outcome& outcome) {
  outcome.owners = o.owners.Take();
  outcome.declared = std::move(o.claims.declared);
}

// How the diagnostics are kept: CheckOptions::instances_per_group and
// CheckOptions::stream.
struct Keeping {
  size_t per_group = 0;
  DiagnosticStream* stream = nullptr;
};

Result CheckDocument(std::shared_ptr<const Document> doc, int threads, Keeping keeping, const FastPaths& fast) {
  auto outcome = std::make_shared<Outcome>();
  outcome->threads = threads;
  outcome->document = doc;
  outcome->tree = std::make_unique<const ModuleTree>(*doc, fast.in_order_resolution);
  const ModuleTree* tree = outcome->tree.get();
  Result result;
  Ownership o(*tree);
  DiagnosticSink sink(Mode::kCheck, keeping.per_group, keeping.stream);
  CheckOwnership(*tree, o, sink);
  if (!sink.has_errors() && doc->plan && o.owners.size() != 0) {
    ValidatePlan(*tree, o.owners, o.claims, *doc->plan, sink);
    // Shape findings are warnings here: check keeps the reference's verdict.
    if (!sink.has_errors()) CheckShapes(*doc, DeclarationsOf(*tree, *doc->plan), sink);
  }
  // Warnings here (Mode::kCheck), after the reference's findings.
  CheckPipeline(*tree, sink);
  if (doc->training) {
    // The training memory of the document's plan, when everything so far
    // passed (its verdict is a warning here too).
    std::optional<MemoryReport> memory;
    std::vector<const NamedPlacements*> placements;
    if (!sink.has_errors() && doc->plan) {
      placements = PlacementsByParameter(*tree, *doc->plan);
      memory = ComputeMemory(*doc, placements);
    }
    CheckTraining(*tree, placements, memory, sink);
    if (memory && memory->training) outcome->checked_memory = std::move(memory);
  }
  result.ok = !sink.has_errors();
  result.diagnostics = sink.Take(result.groups);
  if (result.ok) outcome->owned = TakeOwned(o);
  TakeOwners(o, *outcome);
  result.outcome = std::move(outcome);
  return result;
}

// `doc` is the only reference to a freshly parsed document: the plan interns
// the names it creates into it.
Result PlanDocument(std::unique_ptr<Document> parsed, int threads, Keeping keeping, const FastPaths& fast) {
  Document& doc = *parsed;
  auto outcome = std::make_shared<Outcome>();
  outcome->threads = threads;
  outcome->document = std::shared_ptr<const Document>(std::move(parsed));
  outcome->tree = std::make_unique<const ModuleTree>(doc, fast.in_order_resolution);
  const ModuleTree* tree = outcome->tree.get();
  Result result;
  Ownership o(*tree);
  DiagnosticSink sink(Mode::kPlan, keeping.per_group, keeping.stream);
  CheckOwnership(*tree, o, sink);
  std::vector<const NamedPlacements*> placements;  // of the plan made
  if (!sink.has_errors()) {
    const absl::Span<const Owner> entries = std::as_const(o.owners).InOrder();
    BuiltPlan plan = BuildPlan(doc, *tree, entries, o.claims.declared, sink);
    // A template conflict keeps the first placement: the rest of the plan is
    // still checked, so every problem is reported at once. As for a
    // document's plan, the plan checks need an owner (spec section 6).
    if (entries.empty()) {
      ReportUnknownModules(*tree, plan.entries, sink);
    } else {
      ValidatePlan(*tree, o.owners, o.claims, plan.entries, sink);
    }
    CheckShapes(doc, DeclarationsOf(*tree, plan.entries, plan.packed), sink);
    ReportUnplanned(*tree, plan.entries, sink);
    PlanOutput& out = outcome->planned.emplace();
    placements = PlacementsByParameter(*tree, plan.entries);
    out.memory = ComputeMemory(doc, placements);
    out.communication = ComputeCommunication(doc, plan.entries);
    out.entries = std::move(plan.entries);
    out.provenance = std::move(plan.provenance);
  }
  // It reads only the module tree: checked whatever else failed.
  CheckPipeline(*tree, sink);
  if (doc.training) {
    // Without a plan (the ownership checks failed), only the section's
    // patterns are checked.
    std::optional<MemoryReport> none;
    CheckTraining(*tree, placements, outcome->planned ? outcome->planned->memory : none, sink);
  }
  result.ok = !sink.has_errors();
  result.diagnostics = sink.Take(result.groups);
  if (result.ok) outcome->owned = TakeOwned(o);
  TakeOwners(o, *outcome);
  result.outcome = std::move(outcome);
  return result;
}

absl::Status ValidateThreads(int threads) {
  if (threads < 0) return absl::InvalidArgumentError("threads must be 0 (all cores) or positive");
  return absl::OkStatus();
}

}  // namespace

namespace {

// Check (plan false) or Plan of `json`; `release`, when given, is called as
// soon as the text is no longer read.
absl::StatusOr<Result> Run(std::string_view json, const CheckOptions& options, bool plan,
                           const std::function<void()>* release, const FastPaths& fast = {}) {
  absl::Status s = ValidateThreads(options.threads);
  if (options.limits.max_paths == 0 || options.limits.max_fqn_bytes == 0 || options.limits.max_json_depth < 1) {
    s = absl::InvalidArgumentError("limits must be positive");
  }
  if (!s.ok()) {
    if (release != nullptr) (*release)();
    return s;
  }
  return WithThreads(options.threads, [&]() -> Result {
    ParseResult parsed = ParseDocument(json, options.limits, fast.skip_repeated_layouts);
    if (release != nullptr) (*release)();
    if (parsed.error) {
      Result invalid = InvalidDocumentResult(std::move(*parsed.error));
      if (options.stream != nullptr) {
        options.stream->Write(invalid.diagnostics[0]);
        invalid.diagnostics.clear();
      }
      return invalid;
    }
    const Keeping keeping{options.instances_per_group, options.stream};
    if (!plan || parsed.document->plan) {
      return CheckDocument(std::move(parsed.document), options.threads, keeping, fast);
    }
    return PlanDocument(std::move(parsed.document), options.threads, keeping, fast);
  });
}

}  // namespace

absl::StatusOr<Result> Check(std::string_view json, const CheckOptions& options) {
  return Run(json, options, /*plan=*/false, nullptr);
}

absl::StatusOr<Result> Plan(std::string_view json, const CheckOptions& options) {
  return Run(json, options, /*plan=*/true, nullptr);
}

absl::StatusOr<Result> CheckWith(std::string_view json, const CheckOptions& options, const FastPaths& fast) {
  return Run(json, options, /*plan=*/false, nullptr, fast);
}

absl::StatusOr<Result> PlanWith(std::string_view json, const CheckOptions& options, const FastPaths& fast) {
  return Run(json, options, /*plan=*/true, nullptr, fast);
}

absl::StatusOr<Result> CheckText(std::string_view json, const std::function<void()>& release,
                                 const CheckOptions& options) {
  return Run(json, options, /*plan=*/false, &release);
}

absl::StatusOr<Result> PlanText(std::string_view json, const std::function<void()>& release,
                                const CheckOptions& options) {
  return Run(json, options, /*plan=*/true, &release);
}

ParsedDocument Parse(std::string_view json, const Limits& limits) {
  ParseResult parsed = ParseDocument(json, limits);
  return {std::move(parsed.document), std::move(parsed.error)};
}

bool IsValidUtf8(std::string_view text) { return utf8::IsValid(text); }

const std::vector<DiagnosticCode>& DiagnosticCodes() {
  struct Table {
    std::vector<std::string> messages;  // what the rows' messages view
    std::vector<DiagnosticCode> rows;
  };
  static const Table* const table = [] {
    auto* t = new Table;
    t->messages.reserve(kCodeCount);  // the views stay valid
    for (const CodeInfo& info : kCodes) {
      // The format's "{N}", "{N!r}" and "{N!l}" as "…", quoted as the
      // message quotes a name or a list.
      std::string& message = t->messages.emplace_back();
      SpellFormat(info.format, message, [](std::string& out, size_t, char conversion) {
        out += conversion == 'r' ? "'…'" : conversion == 'l' ? "['…']" : "…";
      });
      t->rows.push_back({info.name, info.severity, info.check_severity, message, info.doc});
    }
    return t;
  }();
  return table->rows;
}

absl::StatusOr<Result> PlanParsed(const Document& document, int threads) {
  if (absl::Status s = ValidateThreads(threads); !s.ok()) return s;
  return WithThreads(threads, [&]() -> Result {
    std::unique_ptr<Document> copy = document.Clone();
    if (copy->plan) return CheckDocument(std::move(copy), threads, {}, {});
    return PlanDocument(std::move(copy), threads, {}, {});
  });
}

absl::StatusOr<Result> CheckParsed(std::shared_ptr<const Document> document, int threads) {
  if (document == nullptr) return absl::InvalidArgumentError("no document");
  if (absl::Status s = ValidateThreads(threads); !s.ok()) return s;
  return WithThreads(threads, [&] { return CheckDocument(std::move(document), threads, {}, {}); });
}

}  // namespace shardplan

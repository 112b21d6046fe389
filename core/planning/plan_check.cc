#include "core/planning/plan_check.h"

#include "core/exec/scan_then_apply.h"
#include "core/model/nearest.h"
#include "core/planning/plan_entry.h"

namespace shardplan {

void ReportUnknownModules(const ModuleTree& tree, const std::vector<FqnLayout>& plan, DiagnosticSink& sink) {
  ModuleTree::Resolver resolver(tree);
  for (const FqnLayout& entry : plan) {
    const std::string_view fqn = tree.doc().Name(entry.fqn);
    if (resolver.Resolve(fqn) == kNoPath) ReportUnknownModule(tree.doc(), entry, NearestModule(tree, 0, fqn), sink);
  }
}

void ValidatePlan(const ModuleTree& tree, const Owners& owners, const Claims& claims,
                  const std::vector<FqnLayout>& plan, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  PlanDeclarations declared(doc.parameters.size());
  ScanThenApply<PlanEntryCheck>(
      plan.size(), 1024,
      [&](size_t begin, size_t end, PlanEntryCheck* checks) {
        ModuleTree::Resolver resolver(tree);
        for (size_t i = begin; i < end; ++i) CheckPlanEntry(tree, resolver, owners, claims, plan[i], checks[i - begin]);
      },
      [&](size_t i, PlanEntryCheck& check) { SettlePlanEntry(doc, plan[i], check, claims, declared, sink); });

  // The first expected parameter no entry declares, looked for only when
  // there is one.
  if (declared.covered == claims.expected_count) return;
  for (ParamId p = 0; p < doc.parameters.size(); ++p) {
    if (claims.expected[p] && declared.first[p] == nullptr) {
      const std::string parameter =
          claims.owned(p) ? claims.CanonicalName(tree, p) : std::string(doc.Name(doc.parameters[p].id));
      sink.Report(Code::kOverrideRemovedCoverage, {.parameter = parameter, .pointer = "/plan/modules"});
      return;
    }
  }
}

}  // namespace shardplan

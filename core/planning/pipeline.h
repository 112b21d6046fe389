// The checks of a pipeline plan (a Hugging Face base_model_pp_plan: module ->
// (inputs, outputs), where the model splits into pipeline stages) against
// the module tree.
#ifndef SHARDPLAN_CORE_PLANNING_PIPELINE_H_
#define SHARDPLAN_CORE_PLANNING_PIPELINE_H_

#include "core/diagnostics/sink.h"
#include "core/model/module_tree.h"

namespace shardplan {

// Reports each module of the document's pipeline plan that is no module
// under its prefix (pipeline-unknown-module), and each input a stage takes
// that nothing can give it (pipeline-unknown-input). An input can come
// from the stage's module (one of its forward names; any name when its
// forward takes **kwargs; for a container whose forward has no plain
// parameter, such as a ModuleList, from each of its children), from the
// prefix module, whose forward feeds the stages (one of its forward names),
// or from an earlier stage (one of its outputs). Outputs name what a
// forward returns, which the document does not describe: they are not
// checked. Nothing without a pipeline plan.
void CheckPipeline(const ModuleTree& tree, DiagnosticSink& sink);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_PIPELINE_H_

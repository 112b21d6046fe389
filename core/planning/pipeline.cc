#include "core/planning/pipeline.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/fixes.h"
#include "core/model/nearest.h"
#include "core/text/suggest.h"

namespace shardplan {
namespace {

// Whether the module at `q` takes `name` as a forward input, and the names
// it takes (into `names`, for a did-you-mean).
bool Takes(const ModuleTree& tree, PathId q, std::string_view name, std::vector<std::string_view>& names) {
  const Document& doc = tree.doc();
  for (NameId f : tree.forward(q)) names.push_back(doc.Name(f));
  if (tree.var_keyword(q) || std::find(names.begin(), names.end(), name) != names.end()) return true;
  const Module& module = doc.modules[tree.module(q)];
  const size_t children = module.children.size();
  if (module.first_input != kNoName || children == 0) return false;
  // A container (its forward has no plain parameter): each child takes it.
  bool every = true;
  for (size_t c = 0; c < children; ++c) {
    std::vector<std::string_view> child_names;
    every = Takes(tree, tree.child(q, c), name, child_names) && every;
    if (c == 0) names.insert(names.end(), child_names.begin(), child_names.end());
  }
  return every;
}

}  // namespace

void CheckPipeline(const ModuleTree& tree, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  if (!doc.pipeline) return;
  const PipelinePlan& pipeline = *doc.pipeline;
  const PathId prefix = pipeline.prefix.empty() ? PathId{0} : tree.Resolve(pipeline.prefix);
  if (prefix == kNoPath) {
    const std::optional<std::string> nearest = NearestModule(tree, 0, pipeline.prefix);
    sink.Report(Code::kPipelineUnknownModule,
                {.fqn = pipeline.prefix,
                 .pointer = "/pipeline/prefix",
                 .fix_it = nearest ? MakeFixIt(DidYouMean(*nearest), {ReplaceWithString("/pipeline/prefix", *nearest)})
                                   : nullptr},
                pipeline.prefix);
    return;
  }
  std::vector<std::string_view> given;  // the prefix module's forward names, then earlier stages' outputs
  for (NameId f : tree.forward(prefix)) given.push_back(doc.Name(f));
  for (const PipelineStage& stage : pipeline.stages) {
    const PathId q = tree.ResolveFrom(prefix, stage.module);
    if (q == kNoPath) {
      const std::optional<std::string> nearest = NearestModule(tree, prefix, stage.module);
      const std::string fqn = pipeline.prefix.empty() ? stage.module : absl::StrCat(pipeline.prefix, ".", stage.module);
      sink.Report(Code::kPipelineUnknownModule,
                  {.fqn = fqn,
                   .pointer = stage.pointer,
                   .fix_it = nearest ? MakeFixIt(DidYouMean(*nearest), {RenameMember(stage.pointer, *nearest)})
                                     : nullptr},
                  fqn);
    } else {
      for (size_t i = 0; i < stage.inputs.size(); ++i) {
        const std::string& input = stage.inputs[i];
        std::vector<std::string_view> names;
        if (Takes(tree, q, input, names) || std::find(given.begin(), given.end(), input) != given.end()) continue;
        NearestName near(input);
        for (std::string_view n : names) near.Consider(n);
        for (std::string_view n : given) near.Consider(n);
        const std::string pointer = absl::StrCat(stage.pointer, "/0/", i);
        sink.Report(Code::kPipelineUnknownInput,
                    {.fqn = tree.fqn(q),
                     .pointer = pointer,
                     .fix_it = near.best() ? MakeFixIt(DidYouMean(*near.best()),
                                                       {ReplaceWithString(pointer, *near.best())})
                                           : nullptr},
                    stage.module, input);
      }
    }
    for (const std::string& output : stage.outputs) given.push_back(output);
  }
}

}  // namespace shardplan

// Building a shardplan.v1 Document in code (spec section 2, planner-v1
// section 1), for callers that hold a model in memory: the document is made
// directly, as ParseDocument makes it from the equivalent JSON text (names
// interned, layouts stored once in the document's MapStore), with no JSON in
// between. The C ABI's builder (sp_builder_*, sp_layout_*) wraps this one.
//
//   DocumentBuilder b;
//   b.AddAxis("tp", 4);
//   const int64_t shape[] = {64, 64};
//   b.AddParameter("w", absl::MakeConstSpan(shape), "bfloat16");
//   b.AddModule("root", "Model");
//   b.AddModule("lin", "Linear");
//   b.AddForwardArg("lin", "x");
//   b.AddModuleParam("lin", "weight", "w");
//   b.AddChild("root", "proj", "lin");
//   b.SetRoot("root");
//   LayoutDraft l;
//   l.Place(LayoutDraft::kParams, "weight", "tp", "S(0)");
//   l.AddEntry(LayoutDraft::kInSrc, "x");
//   l.AddEntry(LayoutDraft::kInDst, "x");
//   b.AddProvider("proj", l);
//   ParsedDocument built = b.Build(Limits{});  // built.document, or built.error
//   absl::StatusOr<Result> r = CheckParsed(built.document, 0);
//
// The contract:
// - Order: every list and map of the document keeps the order of the calls
//   that add to it, as parsing keeps the order of a JSON object's members:
//   axes, parameters, modules, a module's forward entries, children and
//   params, providers, native requests, plan entries, templates and their
//   rules, overrides, pipeline modules, and in a layout its entries and an
//   entry's axes.
// - Refused at the call (absl::InvalidArgumentError; nothing changes), where
//   the equivalent JSON is an invalid document for what the call alone says: a
//   name given twice where the format wants it unique (an axis, a parameter or
//   module id, a child or parameter name within a module, a provider, plan or
//   override FQN, a template's pattern, a pipeline module, an axis within a
//   layout entry); a mesh size below 1; a negative dimension; a parameter of
//   more than 2^63 - 1 bytes (its elements times its dtype's size); an unknown
//   dtype; blocks that do not fit the parameter's shape; a child or parameter
//   name that is empty or contains '.', or that is both a child and a
//   parameter; an empty binding_kind; a malformed placement; an unknown legacy
//   field or template style; an empty template pattern or pipeline module; a
//   cached layout for a module that is not a family member; a plan or override
//   layout without params; a plan next to templates or overrides; and, since
//   these name something that must exist when the call is made, a module id
//   before AddModule, a parameter id before AddParameter, a template axis
//   before AddAxis, a template index before AddTemplate and a pipeline module
//   before SetPipeline (which refuses a second pipeline plan, as the JSON has
//   one `pipeline` key).
// - Reported by Build, as the parser reports the equivalent JSON (one
//   invalid-document diagnostic, the same message and JSON pointer, the
//   pointer into ToJson's text): what depends on the whole document, so
//   that modules and parameters may be added in any order. Parameters
//   totalling more than 2^63 - 1 bytes; no root; a child
//   or parameter that names an id never added; a root id never added; a
//   cycle in children; a tree that exceeds the path limits. These are
//   document_checks.h's, shared with the parser, in the parser's order.
// - Names are UTF-8 (the caller checks, e.g. with engine.h's IsValidUtf8);
//   they are copied.
// - Empty means absent where the format has a default: a module type "" is
//   none, a dtype "" is float32, a template or pipeline prefix "" is the
//   root.
#ifndef SHARDPLAN_CORE_BUILDER_H_
#define SHARDPLAN_CORE_BUILDER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/engine.h"
#include "core/limits.h"

namespace shardplan {

// A layout as a caller states it, by name, before it is given to a
// DocumentBuilder (which copies it: one draft may be given several times).
// Each map is absent until declared; an entry is added once and keeps its
// place; an axis is placed once per entry.
class LayoutDraft {
 public:
  enum Map : uint8_t { kParams, kInSrc, kInDst, kOutSrc, kOutDst };
  static constexpr size_t kMaps = 5;

  // Declares `map` present (an empty map until entries are added); again
  // does nothing.
  void Declare(Map map) { maps_[map].declared = true; }
  // Adds entry `name` to `map` (declaring it) with no placement yet; an
  // existing entry is kept where it is.
  void AddEntry(Map map, std::string_view name);
  // Places entry `name` of `map` (added if needed) on mesh axis `axis`:
  // "R", "S(dim)", "P" or "P(op)". Refuses a malformed placement and an
  // axis placed twice for the entry.
  absl::Status Place(Map map, std::string_view name, std::string_view axis, std::string_view placement);
  // Sets out_names, replacing an earlier list.
  void SetOutNames(std::vector<std::string> names) { out_names_ = std::move(names); }
  // Sets legacy compute-injection field `field` (local_compute_fn,
  // inner_wrapper, inner_target or region_dispatch); a layout that sets one is the legacy-injection
  // diagnostic wherever it owns a module. Refuses another name.
  absl::Status SetLegacyField(std::string_view field);

  bool declared(Map map) const { return maps_[map].declared; }

 private:
  friend class DocumentBuilder;
  struct Entry {
    std::string name;
    std::vector<std::pair<std::string, std::string>> placements;  // axis, placement (well-formed)
  };
  struct Port {
    bool declared = false;
    std::vector<Entry> entries;
    absl::flat_hash_map<std::string, size_t> index;  // entry name -> position
  };
  Entry& FindOrAdd(Map map, std::string_view name);

  std::array<Port, kMaps> maps_;
  std::optional<std::vector<std::string>> out_names_;
  std::array<bool, 4> legacy_{};  // per legacy field, in the order above
};

// A parallel spec as a caller states it; the views are copied.
struct ParallelDraft {
  std::string_view binding_kind;
  absl::Span<const std::string_view> axes;
};

class DocumentBuilder {
 public:
  DocumentBuilder();
  DocumentBuilder(const DocumentBuilder&) = delete;
  DocumentBuilder& operator=(const DocumentBuilder&) = delete;
  ~DocumentBuilder();

  // Appends mesh axis `name` of `size` (>= 1) devices.
  absl::Status AddAxis(std::string_view name, int64_t size);
  // Adds parameter identity `id`: `shape` (dims >= 0; nullopt: unknown) and
  // `dtype` ("" is float32).
  absl::Status AddParameter(std::string_view id, std::optional<absl::Span<const int64_t>> shape,
                            std::string_view dtype);
  // Sets the blocks of parameter `id` (planner-v1 section 4): one positive
  // integer per dim of its known shape, each dividing its dim. Replaces
  // earlier blocks.
  absl::Status SetParameterBlocks(std::string_view id, absl::Span<const int64_t> blocks);
  // Adds module identity `id` of class `type` ("": none).
  absl::Status AddModule(std::string_view id, std::string_view type);
  // Appends `spelled` to the module's forward signature: "x", "*args" (a
  // var-positional parameter args) or "**kwargs" (var-keyword).
  absl::Status AddForwardArg(std::string_view module, std::string_view spelled);
  // Registers module id `child` (resolved by Build) as child `name`.
  absl::Status AddChild(std::string_view module, std::string_view name, std::string_view child);
  // Registers parameter id `parameter` (resolved by Build) as the module's
  // parameter `name`.
  absl::Status AddModuleParam(std::string_view module, std::string_view name, std::string_view parameter);
  // Sets the module's own parallel spec; null clears it.
  absl::Status SetModuleParallel(std::string_view module, const ParallelDraft* parallel);
  // Makes the module a family member (again: updates it, keeping a cached
  // layout): `parallel`, and its sharding provider's layout (null: none).
  absl::Status SetFamily(std::string_view module, bool parallel, const LayoutDraft* sharding);
  // Sets the layout already applied to a family member, and its parallel
  // spec (null: none).
  absl::Status SetFamilyCached(std::string_view module, const LayoutDraft& sharding, const ParallelDraft* parallel);
  // Sets the root module's id (resolved by Build), replacing an earlier one.
  void SetRoot(std::string_view module);
  // Adds the model adapter's sharding provider for the module at `fqn`.
  absl::Status AddProvider(std::string_view fqn, const LayoutDraft& layout);
  // Appends a native binding request: glob patterns, the layout provided for
  // every match, a parallel spec (null: none).
  absl::Status AddNative(absl::Span<const std::string_view> match, const LayoutDraft& sharding,
                         const ParallelDraft* parallel);
  // Gives the document a final plan, empty until entries are added.
  absl::Status DeclarePlan();
  // Adds the final-plan layout of the module at `fqn` (declaring the plan);
  // the layout must declare params.
  absl::Status AddPlanEntry(std::string_view fqn, const LayoutDraft& layout);
  // Appends a template for mesh axis `axis` under FQN `prefix`; returns its
  // index, which AddTemplateRule takes.
  absl::StatusOr<size_t> AddTemplate(std::string_view axis, std::string_view prefix);
  // Appends rule `pattern` -> `style` (a planner-v1 section 2 style name) to
  // template `index`.
  absl::Status AddTemplateRule(size_t index, std::string_view pattern, std::string_view style);
  // Adds the override of the module at `fqn`; the layout must declare params.
  absl::Status AddOverride(std::string_view fqn, const LayoutDraft& layout);
  // Gives the document a pipeline plan (Hugging Face's base_model_pp_plan)
  // under FQN `prefix` ("": the root), with no modules until
  // AddPipelineModule adds them. Refuses a second pipeline plan.
  absl::Status SetPipeline(std::string_view prefix);
  // Gives the document its `training` section (training-v1), `json` being
  // the section's JSON text (an object, docs/format.md): refused when it is
  // not one or a value in it is invalid, and when the document already has
  // one. What depends on the mesh (the shard and tensor axes and their
  // defaults) is checked by Build.
  absl::Status SetTraining(std::string_view json);
  // Appends pipeline stage `module` (relative to the plan's prefix), which
  // takes `inputs` and gives `outputs`, in order. Requires SetPipeline; the
  // module must be non-empty and not already in the plan.
  absl::Status AddPipelineModule(std::string_view module, const std::vector<std::string_view>& inputs,
                                 const std::vector<std::string_view>& outputs);

  // The document built so far, as ParseDocument would read ToJson()'s text
  // with `limits` (the JSON depth limit aside: there is no JSON). The
  // document shares nothing with the builder, which stays usable.
  ParsedDocument Build(const Limits& limits) const;
  // The document built so far as shardplan.v1 JSON (document_json.h), the
  // text a Build diagnostic's pointer points into.
  std::string ToJson() const;

 private:
  // The document so far, and what the calls check against (builder.cc).
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_BUILDER_H_

// The parsed shardplan.v1 document (spec section 2): mesh, parameter and
// module identities, providers and an optional final plan. Every name is
// interned; modules and parameters are dense indexes.
#ifndef SHARDPLAN_CORE_MODEL_DOCUMENT_H_
#define SHARDPLAN_CORE_MODEL_DOCUMENT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/model/interner.h"
#include "core/model/name_set.h"
#include "core/model/placement.h"
#include "core/model/style.h"

namespace shardplan {

using ModuleId = uint32_t;
using ParamId = uint32_t;

enum class Dtype : uint8_t {
  kFloat32,
  kFloat16,
  kBfloat16,
  kFloat8E4m3fn,
  kFloat8E5m2,
  kInt8,
  kInt32,
  kInt64,
  kBool,
};

// The dtype spelled `name` ("float32", "bfloat16", ...; spec section 2), or
// nullopt for a name that is no dtype.
std::optional<Dtype> ParseDtype(std::string_view name);
// The spelling of `dtype`.
std::string_view DtypeName(Dtype dtype);
// Element size of `dtype` in bytes (planner-v1 section 5): float32/int32 4,
// float16/bfloat16 2, float8_*/int8/bool 1, int64 8.
uint64_t DtypeBytes(Dtype dtype);

// The most bytes a parameter may hold, and all parameters of a document
// together: 2^63 - 1. The parser and the builder refuse larger ones, so
// every byte count derived from shapes (a parameter, a device's share of
// it, a device's total, the unsharded total) is exact in int64_t, and a
// sum of such counts over the devices of a mesh is exact in 128 bits.
inline constexpr uint64_t kMaxParameterBytes = uint64_t{INT64_MAX};

// The bytes of a tensor of `shape` (dims >= 0) in `dtype`: its element
// count times the dtype's size, or nullopt when that exceeds
// kMaxParameterBytes. A dim of 0 makes an empty tensor, whatever the
// others.
std::optional<uint64_t> TensorBytes(absl::Span<const int64_t> shape, Dtype dtype);

// A vector as large as a std::vector (24 bytes) that holds up to 16 bytes of
// elements inline: the few names, children, parameters or dims a module or
// parameter usually has need no allocation.
template <typename T>
using SmallVector = absl::InlinedVector<T, 16 / sizeof(T)>;

// Named placements of ports (inputs or outputs) or of parameters, keyed by an
// interned (possibly dotted) local name, in document order.
struct PlacementEntry {
  NameId name;
  NamedPlacements placements;
};
using PlacementMap = absl::InlinedVector<PlacementEntry, 1>;

// A layout's placement map, or none (absent or null in the document). It
// points to an immutable map a MapStore keeps once however many layouts
// spell it: a model has millions of layouts and few distinct maps, so a
// map costs a layout body 8 bytes, whatever it holds. Read like a
// std::optional.
class MapRef {
 public:
  MapRef() = default;
  explicit operator bool() const { return map_ != nullptr; }
  const PlacementMap& operator*() const { return *map_; }
  const PlacementMap* operator->() const { return map_; }
  // The stored map: equal maps of one store are one map.
  const PlacementMap* get() const { return map_; }

 private:
  friend class MapStore;
  explicit MapRef(const PlacementMap* map) : map_(map) {}
  const PlacementMap* map_ = nullptr;
};

// A layout's out_names, or none (absent or null in the document), read like
// a std::optional: 8 bytes where a std::optional<SmallVector<NameId>> is 32
// (few layouts have out_names).
class OptionalNames {
 public:
  OptionalNames() = default;
  OptionalNames(const OptionalNames& other) { *this = other; }
  OptionalNames(OptionalNames&&) noexcept = default;
  OptionalNames& operator=(const OptionalNames& other) {
    if (this != &other) names_ = other ? std::make_unique<SmallVector<NameId>>(*other) : nullptr;
    return *this;
  }
  OptionalNames& operator=(OptionalNames&&) noexcept = default;
  OptionalNames& operator=(std::optional<SmallVector<NameId>> names) {
    names_ = names ? std::make_unique<SmallVector<NameId>>(std::move(*names)) : nullptr;
    return *this;
  }

  explicit operator bool() const { return names_ != nullptr; }
  bool has_value() const { return names_ != nullptr; }
  const SmallVector<NameId>& operator*() const { return *names_; }
  const SmallVector<NameId>* operator->() const { return names_.get(); }
  SmallVector<NameId>* operator->() { return names_.get(); }
  // The names, or null when there are none.
  const SmallVector<NameId>* get() const { return names_.get(); }
  // Makes the names an empty list.
  void emplace() { names_ = std::make_unique<SmallVector<NameId>>(); }

  // Equal when both are absent, or both present and equal.
  friend bool operator==(const OptionalNames& a, const OptionalNames& b) {
    return a && b ? *a == *b : !a && !b;
  }

 private:
  std::unique_ptr<SmallVector<NameId>> names_;
};

// The legacy compute-injection fields of a layout, in the order in which
// the first one set is looked for (LayoutBody::legacy_field).
inline constexpr std::string_view kLegacyLayoutFields[] = {"local_compute_fn", "inner_wrapper", "inner_target",
                                                           "region_dispatch"};

// What a layout says: its placement maps, out_names and legacy field. A
// MapStore keeps each distinct one once, however many layouts say it: a
// model has millions of layouts and few distinct ones, so a layout is a
// pointer to its body and where it was declared (32 bytes with its FQN).
struct LayoutBody {
  MapRef params;
  MapRef in_src;
  MapRef in_dst;
  MapRef out_src;
  MapRef out_dst;
  OptionalNames out_names;
  // The first legacy field (local_compute_fn, inner_wrapper, inner_target,
  // region_dispatch) with a non-null value, or kNoName.
  NameId legacy_field = kNoName;
};

// The body of a layout that says nothing (every field absent).
inline const LayoutBody kEmptyLayoutBody{};

// The placement maps of a document's layouts, each stored once. A store
// keeps the store it was made from (`base`) alive, so that a copy of a
// document may keep referring to its original's maps.
class MapStore {
 public:
  explicit MapStore(std::shared_ptr<const MapStore> base = nullptr) : base_(std::move(base)) {}
  MapStore(const MapStore&) = delete;
  MapStore& operator=(const MapStore&) = delete;

  // A reference to a map equal to `map` (entries in the same order, equal
  // placements), stored on first use.
  MapRef Intern(PlacementMap map);
  // A body equal to `body` (the same stored maps, out_names and legacy
  // field), stored on first use: layouts that say the same share it.
  const LayoutBody* Intern(LayoutBody body);

 private:
  static size_t HashOf(const PlacementMap& map);
  static size_t HashOf(const LayoutBody& body);
  static bool Same(const PlacementMap& a, const PlacementMap& b);
  static bool Same(const LayoutBody& a, const LayoutBody& b);
  // Hash and equality of a stored T (by its pointer) and of a T to look up.
  template <typename T>
  struct Hash {
    using is_transparent = void;
    size_t operator()(const T* stored) const { return HashOf(*stored); }
    size_t operator()(const T& value) const { return HashOf(value); }
  };
  template <typename T>
  struct Eq {
    using is_transparent = void;
    static const T& Of(const T* stored) { return *stored; }
    static const T& Of(const T& value) { return value; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Same(Of(a), Of(b));
    }
  };
  template <typename T>
  using Index = absl::flat_hash_set<const T*, Hash<T>, Eq<T>>;
  // The stored value equal to `value`, stored on first use.
  template <typename T>
  static const T* Stored(T value, std::deque<T>& values, Index<T>& index) {
    auto it = index.find(value);
    if (it != index.end()) return *it;
    const T* stored = &values.emplace_back(std::move(value));
    index.insert(stored);
    return stored;
  }

  std::shared_ptr<const MapStore> base_;
  std::deque<PlacementMap> maps_;  // never moved: references stay valid
  Index<PlacementMap> index_;
  std::deque<LayoutBody> bodies_;  // never moved
  Index<LayoutBody> body_index_;
};

// Where in the document a layout or a parallel spec was declared. Its JSON
// pointer is spelled from this only when a diagnostic needs it
// (Document::PointerOf): a model has millions of them.
struct Origin {
  enum class Kind : uint8_t {
    kProvider,        // /providers/sharding/<fqn of model_providers[index]>
    kPlan,            // /plan/modules/<fqn of (*plan)[index]>
    kOverride,        // /overrides/<fqn of overrides[index]>
    kNativeSharding,  // /providers/native/<index>/sharding
    kNativeParallel,  // /providers/native/<index>/parallel
    kFamily,          // /modules/<id of modules[index]>/family/sharding
    kCachedSharding,  // /modules/<id>/family/cached/sharding
    kCachedParallel,  // /modules/<id>/family/cached/parallel
    kModuleParallel,  // /modules/<id>/parallel
    kTemplateRule,    // the pointer of templates[index].rules[rule]
  };
  Kind kind = Kind::kProvider;
  uint32_t index = 0;
  uint32_t rule = 0;
};

// A module sharding spec: its stored body and where in the document it was
// declared. A field without a value (a MapRef or OptionalNames that holds
// none) was absent or null.
struct Layout {
  const LayoutBody* body = &kEmptyLayoutBody;  // never null
  Origin origin;  // of the layout object

  const MapRef& params() const { return body->params; }
  const MapRef& in_src() const { return body->in_src; }
  const MapRef& in_dst() const { return body->in_dst; }
  const MapRef& out_src() const { return body->out_src; }
  const MapRef& out_dst() const { return body->out_dst; }
  const OptionalNames& out_names() const { return body->out_names; }
  NameId legacy_field() const { return body->legacy_field; }
};

struct ParallelSpec {
  NameId binding_kind;
  Origin origin;
  SmallVector<NameId> axes;
};

struct Family {
  struct Cached {
    Layout sharding;
    std::optional<ParallelSpec> parallel;
  };
  bool parallel = false;
  std::optional<Layout> sharding;
  std::optional<Cached> cached;
};

// Fields ordered to pack: a model has millions of parameters and modules.
struct Parameter {
  NameId id;
  Dtype dtype = Dtype::kFloat32;
  std::optional<SmallVector<int64_t>> shape;  // nullopt: unknown
  SmallVector<int64_t> blocks;                // empty: all 1
};

struct Module {
  NameId id;
  NameId type = kNoName;
  SmallVector<NameId> forward;  // names, without the '*' / '**' markers
  bool var_keyword = false;     // forward has a **kwargs parameter
  NameId first_input = kNoName;  // the first forward name without a marker
  SmallVector<std::pair<NameId, ModuleId>> children;
  SmallVector<std::pair<NameId, ParamId>> params;
  std::optional<ParallelSpec> parallel;
  // Behind a pointer: most modules have none, and a Family holds three
  // layouts.
  std::unique_ptr<Family> family;
};

// The kinds of a forward-signature entry, read as the reference reads a
// signature: "**name" is the var-keyword parameter `name`, "*name" a
// var-positional one, anything else a plain one; names are not validated.
enum class ForwardKind : uint8_t { kPlain, kVarPositional, kVarKeyword };

// A spelled forward entry: its name without the marker, and its kind.
inline std::pair<std::string_view, ForwardKind> ReadForwardArg(std::string_view spelled) {
  if (spelled.substr(0, 2) == "**") return {spelled.substr(2), ForwardKind::kVarKeyword};
  if (spelled.substr(0, 1) == "*") return {spelled.substr(1), ForwardKind::kVarPositional};
  return {spelled, ForwardKind::kPlain};
}

// Appends the forward entry `name` of `kind` to `module`, keeping
// var_keyword and first_input.
inline void AppendForward(Module& module, NameId name, ForwardKind kind) {
  if (kind == ForwardKind::kVarKeyword) module.var_keyword = true;
  if (kind == ForwardKind::kPlain && module.first_input == kNoName) module.first_input = name;
  module.forward.push_back(name);
}

struct MeshAxis {
  NameId name;
  int64_t size;
};

struct NativeRequest {
  std::vector<NameId> match;
  Layout sharding;
  std::optional<ParallelSpec> parallel;
  std::string pointer;  // of the request object
};

struct FqnLayout {
  NameId fqn;
  Layout layout;
};
static_assert(sizeof(Layout) <= 24 && sizeof(FqnLayout) <= 32, "a million layouts are streamed by every check");

// One rule of a template: pattern -> style (planner-v1 section 1).
struct TemplateRule {
  std::string pattern;
  Style style;
  std::string pointer;  // of the rule's value
};

// A generic template: rules for one mesh axis, under an FQN prefix.
struct Template {
  NameId axis;
  std::string prefix;
  std::vector<TemplateRule> rules;  // document order
  std::string pointer;              // of the template object
};

// One module of a pipeline plan (a Hugging Face base_model_pp_plan entry):
// where the model splits into stages, with the names the module takes and
// gives.
struct PipelineStage {
  std::string module;                // as written, relative to PipelinePlan::prefix
  std::vector<std::string> inputs;   // in order
  std::vector<std::string> outputs;  // in order
  std::string pointer;               // of the stage's entry
};

// A pipeline plan: its stages in document order, under an FQN prefix.
struct PipelinePlan {
  std::string prefix;
  std::vector<PipelineStage> stages;
};

// The `training` section (training-v1): what a training run keeps per
// device besides the parameters. Defaults are the spec's.
enum class Optimizer : uint8_t { kAdamW, kAdam, kMomentum, kSgd, kNone };
enum class Recompute : uint8_t { kNone, kSelective, kFull };

// The model description activations are computed from, in Hugging Face
// config names (docs/format.md). Every field is below 2^31.
struct ModelDescription {
  int64_t hidden_size = 0;
  int64_t num_attention_heads = 0;
  // 0 until CompleteTraining fills the defaults of these three.
  int64_t num_key_value_heads = 0;  // default: num_attention_heads
  int64_t head_dim = 0;             // default: hidden_size / num_attention_heads
  int64_t intermediate_size = 0;
  bool gated_mlp = true;
  int64_t num_hidden_layers = 0;
  int64_t vocab_size = 0;
  int64_t num_experts = 0;  // 0: no mixture-of-experts layers
  int64_t num_experts_per_tok = 1;
  int64_t moe_intermediate_size = 0;  // default: intermediate_size
  int64_t num_shared_experts = 0;
  int64_t first_k_dense_replace = 0;
};

struct ActivationSettings {
  int64_t micro_batch = 1;
  int64_t seq_len = 0;
  Recompute recompute = Recompute::kSelective;
  std::optional<NameId> tensor_axis;  // none: t = 1; CompleteTraining fills the default
  bool sequence_parallel = false;
};

// A `frozen` or `fsdp_units` pattern with the JSON pointer of its string.
struct TrainingPattern {
  std::string pattern;
  std::string pointer;
};

struct Training {
  int zero = 0;
  std::vector<NameId> shard_axes;  // CompleteTraining fills the default
  // Whether the section gave `shard_axes` and `activations.tensor_axis`
  // (their defaults depend on the mesh).
  bool shard_axes_given = false;
  bool tensor_axis_given = false;
  Optimizer optimizer = Optimizer::kAdamW;
  Dtype optimizer_dtype = Dtype::kFloat32;
  std::optional<Dtype> master_dtype;  // none: no master copy
  std::optional<Dtype> grad_dtype;    // none: each parameter's own dtype
  std::vector<TrainingPattern> frozen;
  std::vector<TrainingPattern> fsdp_units;
  int64_t prefetch = 1;
  std::optional<ActivationSettings> activations;  // set only with `model`
  std::optional<ModelDescription> model;
  std::optional<uint64_t> device_memory;
  double headroom = 0.8;
};

struct Document {
  Interner names;
  // The placement maps of the document's layouts (and of a plan made here).
  std::shared_ptr<MapStore> maps = std::make_shared<MapStore>();
  std::vector<MeshAxis> mesh;
  NameSet mesh_names;
  std::vector<Parameter> parameters;
  std::vector<Module> modules;
  // The modules with a family, in id order (parsing lists them: a model
  // has millions of modules and few families).
  std::vector<ModuleId> family_modules;
  ModuleId root = 0;
  // The size of the module tree from the root, as parsing counted it for
  // the limits: its paths and the bytes of their FQNs with a separator each
  // (an upper bound of their total length). The tree reserves its arrays
  // from them; 0 when unknown.
  uint64_t tree_paths = 0;
  uint64_t tree_fqn_bytes = 0;
  std::vector<FqnLayout> model_providers;
  std::vector<NativeRequest> native;
  std::optional<std::vector<FqnLayout>> plan;
  // A plan to be made here (planner-v1); a document with a `plan` has
  // neither.
  std::vector<Template> templates;
  std::vector<FqnLayout> overrides;
  std::optional<PipelinePlan> pipeline;
  std::optional<Training> training;

  std::string_view Name(NameId id) const { return names.View(id); }
  // The JSON pointer of what `origin` names (of a layout or parallel spec).
  std::string PointerOf(const Origin& origin) const;
  // The JSON pointer of the placements of parameter `param` in the layout
  // `origin` names, where the document writes them; none for a layout a
  // template rule made (the rule's value is a style's name, with nothing
  // inside to point at: PointerOf(origin) names the rule).
  std::optional<std::string> ParamPointerOf(const Origin& origin, std::string_view param) const;
  // Where a diagnostic about parameter `param` of the layout `origin` names
  // points: ParamPointerOf, or for a layout a template rule made, the rule.
  std::string DeclarationPointerOf(const Origin& origin, std::string_view param) const;
  // A deep copy (the planner interns new names and maps into its own
  // document); its layouts share this document's stored maps.
  std::unique_ptr<Document> Clone() const;
  // Whether `axis` is one of the mesh's axes.
  bool IsMeshAxis(NameId axis) const { return mesh_names.Contains(axis); }
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_DOCUMENT_H_

#include "core/builder.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/model/document_json.h"
#include "core/model/parse.h"
#include "gtest/gtest.h"
#include "tests/support/read_file.h"

namespace shardplan {
namespace {

namespace fs = std::filesystem;

// Everything a document says, as text: every field, in its order, names
// spelled out (interned ids differ between a parsed and a built document;
// what they name must not).
class Describer {
 public:
  explicit Describer(const Document& doc) : doc_(doc) {}

  std::string Describe() {
    Line("mesh:");
    for (const MeshAxis& a : doc_.mesh) {
      Line(" ", N(a.name), "=", a.size, doc_.IsMeshAxis(a.name) ? "" : " (not in mesh_names)");
    }
    Line("parameters:");
    for (const Parameter& p : doc_.parameters) {
      Line(" ", N(p.id), " ", DtypeName(p.dtype), " shape=", p.shape ? absl::StrJoin(*p.shape, ",") : "?",
           " blocks=", absl::StrJoin(p.blocks, ","));
    }
    Line("modules:");
    for (const Module& m : doc_.modules) {
      Line(" ", N(m.id), " type=", m.type == kNoName ? "<none>" : N(m.type), " var_keyword=", m.var_keyword,
           " first_input=", m.first_input == kNoName ? "<none>" : N(m.first_input));
      std::vector<std::string> forward;
      for (NameId f : m.forward) forward.emplace_back(N(f));
      Line("  forward=", absl::StrJoin(forward, ","));
      for (const auto& [name, child] : m.children) Line("  child ", N(name), " -> ", N(doc_.modules[child].id));
      for (const auto& [name, param] : m.params) Line("  param ", N(name), " -> ", N(doc_.parameters[param].id));
      if (m.parallel) Line("  parallel ", Parallel(*m.parallel));
      if (m.family) {
        Line("  family parallel=", m.family->parallel);
        if (m.family->sharding) Line("  family sharding ", Layout(*m.family->sharding));
        if (m.family->cached) {
          Line("  cached ", Layout(m.family->cached->sharding));
          if (m.family->cached->parallel) Line("  cached parallel ", Parallel(*m.family->cached->parallel));
        }
      }
    }
    std::vector<std::string> families;
    for (ModuleId m : doc_.family_modules) families.emplace_back(N(doc_.modules[m].id));
    Line("family_modules=", absl::StrJoin(families, ","));
    Line("root=", N(doc_.modules[doc_.root].id), " paths=", doc_.tree_paths, " fqn_bytes=", doc_.tree_fqn_bytes);
    Line("providers:");
    for (const FqnLayout& e : doc_.model_providers) Line(" '", N(e.fqn), "' ", Layout(e.layout));
    Line("native:");
    for (const NativeRequest& r : doc_.native) {
      std::vector<std::string> match;
      for (NameId g : r.match) match.emplace_back(N(g));
      Line(" ", r.pointer, " match=", absl::StrJoin(match, ","), " ", Layout(r.sharding),
           r.parallel ? " parallel " + Parallel(*r.parallel) : "");
    }
    Line("plan: ", doc_.plan ? "present" : "absent");
    if (doc_.plan) {
      for (const FqnLayout& e : *doc_.plan) Line(" '", N(e.fqn), "' ", Layout(e.layout));
    }
    Line("templates:");
    for (const Template& t : doc_.templates) {
      Line(" ", t.pointer, " axis=", N(t.axis), " prefix='", t.prefix, "'");
      for (const TemplateRule& r : t.rules) Line("  ", r.pattern, " -> ", StyleName(r.style), " at ", r.pointer);
    }
    Line("overrides:");
    for (const FqnLayout& e : doc_.overrides) Line(" '", N(e.fqn), "' ", Layout(e.layout));
    Line("pipeline: ", doc_.pipeline ? absl::StrCat("prefix='", doc_.pipeline->prefix, "'") : "absent");
    if (doc_.pipeline) {
      for (const PipelineStage& st : doc_.pipeline->stages) {
        Line(" ", st.module, " (", absl::StrJoin(st.inputs, ","), ") -> (", absl::StrJoin(st.outputs, ","), ") at ",
             st.pointer);
      }
    }
    return out_;
  }

 private:
  std::string N(NameId id) const { return std::string(doc_.Name(id)); }
  template <typename... Args>
  void Line(const Args&... args) {
    absl::StrAppend(&out_, args..., "\n");
  }

  std::string Parallel(const ParallelSpec& p) const {
    std::vector<std::string> axes;
    for (NameId a : p.axes) axes.emplace_back(N(a));
    return absl::StrCat(N(p.binding_kind), "[", absl::StrJoin(axes, ","), "] at ", doc_.PointerOf(p.origin));
  }

  std::string Map(const MapRef& map) const {
    if (!map) return "absent";
    std::string out = "{";
    for (const PlacementEntry& e : *map) {
      absl::StrAppend(&out, N(e.name), ":{");
      for (const AxisPlacement& a : e.placements) absl::StrAppend(&out, N(a.axis), "=", FormatPlacement(a.placement), ";");
      absl::StrAppend(&out, "}");
    }
    return out + "}";
  }

  std::string Layout(const shardplan::Layout& l) const {
    std::string out = absl::StrCat("at ", doc_.PointerOf(l.origin), " params=", Map(l.params()),
                                   " in_src=", Map(l.in_src()), " in_dst=", Map(l.in_dst()),
                                   " out_src=", Map(l.out_src()), " out_dst=", Map(l.out_dst()));
    if (l.out_names()) {
      std::vector<std::string> names;
      for (NameId n : *l.out_names()) names.emplace_back(N(n));
      absl::StrAppend(&out, " out_names=", absl::StrJoin(names, ","));
    }
    if (l.legacy_field() != kNoName) absl::StrAppend(&out, " legacy=", N(l.legacy_field()));
    return out;
  }

  const Document& doc_;
  std::string out_;
};

std::string Describe(const Document& doc) { return Describer(doc).Describe(); }

// The document `json` parses to, described; its error message when invalid.
std::string ParsedDescription(std::string_view json) {
  ParseResult parsed = ParseDocument(json, Limits{});
  if (parsed.error) return "invalid: " + parsed.error->message;
  return Describe(*parsed.document);
}

std::string BuiltDescription(const DocumentBuilder& b) {
  ParsedDocument built = b.Build(Limits{});
  if (built.error) return "invalid: " + built.error->message;
  return Describe(*built.document);
}

LayoutDraft Draft(std::initializer_list<std::tuple<LayoutDraft::Map, const char*, const char*, const char*>> places,
                  std::initializer_list<LayoutDraft::Map> declared = {}) {
  LayoutDraft l;
  for (LayoutDraft::Map m : declared) l.Declare(m);
  for (const auto& [map, name, axis, placement] : places) {
    if (axis == nullptr) {
      l.AddEntry(map, name);
    } else {
      EXPECT_TRUE(l.Place(map, name, axis, placement).ok());
    }
  }
  return l;
}

// Every field of the format but templates and overrides (a document gives
// those or a plan), in an order that is not sorted anywhere.
constexpr char kEveryField[] = R"J({
  "schema": "shardplan.v1",
  "mesh": {"tp": 4, "dp": 2},
  "parameters": {
    "wq": {"shape": [64, 32], "dtype": "bfloat16", "blocks": [8, 1]},
    "bias": {"shape": [64]},
    "scale": {"shape": []},
    "free": {"dtype": "int8"}
  },
  "root": "model",
  "modules": {
    "model": {"type": "Model", "forward": ["input_ids", "*args", "**kwargs"],
              "children": {"z_attn": "attn", "a_norm": "norm", "head": "attn"}},
    "norm": {"type": "RMSNorm", "forward": ["x"], "params": {"weight": "scale"},
             "parallel": {"binding_kind": "none", "axes": []}},
    "attn": {"type": "Attention", "forward": ["*args", "hidden", "**kw"],
             "children": {"inner": "norm"}, "params": {"q": "wq", "b": "bias"},
             "parallel": {"binding_kind": "tp", "axes": ["tp", "dp"]},
             "family": {"parallel": true,
                        "sharding": {"params": {"q": {"tp": "S(0)", "dp": "R"}, "b": {"tp": "S(0)"}},
                                     "in_src": {"hidden": {"tp": "R"}}, "in_dst": {"hidden": {"tp": "R"}},
                                     "out_src": {"out": {"tp": "P(max)"}}, "out_dst": {"out": {"tp": "R"}},
                                     "out_names": ["out"]},
                        "cached": {"sharding": {"params": {"q": {"tp": "S(-1)"}}, "in_src": {}, "in_dst": {},
                                                "inner_wrapper": "x"},
                                   "parallel": {"binding_kind": "mesh", "axes": ["tp"]}}}}
  },
  "providers": {
    "sharding": {"a_norm": {"params": {"weight": {"dp": "R"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}},
                 "z_attn.inner": {"params": {"weight": {"dp": "R"}}, "in_src": {"x": {}}, "in_dst": {"x": {}}},
                 "": {"in_src": {}, "local_compute_fn": "f", "region_dispatch": "g"}},
    "native": [{"match": ["*.inner", "a_?orm"], "parallel": {"binding_kind": "tp", "axes": ["tp"]},
                "sharding": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}}},
               {"match": [], "sharding": {}}]
  },
  "plan": {"modules": {"head": {"params": {"q": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}},
                       "a_norm": {"params": {}}}}
})J";

// kEveryField, call by call in the JSON's order.
void BuildEveryField(DocumentBuilder& b) {
  using L = LayoutDraft;
  ASSERT_TRUE(b.AddAxis("tp", 4).ok());
  ASSERT_TRUE(b.AddAxis("dp", 2).ok());
  const int64_t wq[] = {64, 32}, bias[] = {64}, blocks[] = {8, 1};
  ASSERT_TRUE(b.AddParameter("wq", absl::MakeConstSpan(wq), "bfloat16").ok());
  ASSERT_TRUE(b.SetParameterBlocks("wq", blocks).ok());
  ASSERT_TRUE(b.AddParameter("bias", absl::MakeConstSpan(bias), "").ok());
  ASSERT_TRUE(b.AddParameter("scale", absl::Span<const int64_t>(), "float32").ok());
  ASSERT_TRUE(b.AddParameter("free", std::nullopt, "int8").ok());
  b.SetRoot("model");
  ASSERT_TRUE(b.AddModule("model", "Model").ok());
  for (const char* f : {"input_ids", "*args", "**kwargs"}) ASSERT_TRUE(b.AddForwardArg("model", f).ok());
  // Children name modules that are added later.
  ASSERT_TRUE(b.AddChild("model", "z_attn", "attn").ok());
  ASSERT_TRUE(b.AddChild("model", "a_norm", "norm").ok());
  ASSERT_TRUE(b.AddChild("model", "head", "attn").ok());
  ASSERT_TRUE(b.AddModule("norm", "RMSNorm").ok());
  ASSERT_TRUE(b.AddForwardArg("norm", "x").ok());
  ASSERT_TRUE(b.AddModuleParam("norm", "weight", "scale").ok());
  const ParallelDraft none{"none", {}};
  ASSERT_TRUE(b.SetModuleParallel("norm", &none).ok());
  ASSERT_TRUE(b.AddModule("attn", "Attention").ok());
  for (const char* f : {"*args", "hidden", "**kw"}) ASSERT_TRUE(b.AddForwardArg("attn", f).ok());
  ASSERT_TRUE(b.AddChild("attn", "inner", "norm").ok());
  ASSERT_TRUE(b.AddModuleParam("attn", "q", "wq").ok());
  ASSERT_TRUE(b.AddModuleParam("attn", "b", "bias").ok());
  const std::string_view tp_dp[] = {"tp", "dp"}, tp[] = {"tp"};
  const ParallelDraft attn_parallel{"tp", tp_dp};
  ASSERT_TRUE(b.SetModuleParallel("attn", &attn_parallel).ok());
  LayoutDraft family = Draft({{L::kParams, "q", "tp", "S(0)"},
                              {L::kParams, "q", "dp", "R"},
                              {L::kParams, "b", "tp", "S(0)"},
                              {L::kInSrc, "hidden", "tp", "R"},
                              {L::kInDst, "hidden", "tp", "R"},
                              {L::kOutSrc, "out", "tp", "P(max)"},
                              {L::kOutDst, "out", "tp", "R"}});
  family.SetOutNames({"out"});
  ASSERT_TRUE(b.SetFamily("attn", true, &family).ok());
  LayoutDraft cached = Draft({{L::kParams, "q", "tp", "S(-1)"}}, {L::kInSrc, L::kInDst});
  ASSERT_TRUE(cached.SetLegacyField("inner_wrapper").ok());
  const ParallelDraft mesh{"mesh", tp};
  ASSERT_TRUE(b.SetFamilyCached("attn", cached, &mesh).ok());
  const LayoutDraft norm = Draft({{L::kParams, "weight", "dp", "R"}, {L::kInSrc, "x", nullptr, nullptr},
                                  {L::kInDst, "x", nullptr, nullptr}});
  ASSERT_TRUE(b.AddProvider("a_norm", norm).ok());
  ASSERT_TRUE(b.AddProvider("z_attn.inner", norm).ok());
  LayoutDraft legacy = Draft({}, {L::kInSrc});
  // Set out of the order the parser looks for them in: the first in that
  // order is the one kept.
  ASSERT_TRUE(legacy.SetLegacyField("region_dispatch").ok());
  ASSERT_TRUE(legacy.SetLegacyField("local_compute_fn").ok());
  ASSERT_TRUE(b.AddProvider("", legacy).ok());
  const std::string_view globs[] = {"*.inner", "a_?orm"};
  const ParallelDraft native_parallel{"tp", tp};
  ASSERT_TRUE(b.AddNative(globs, Draft({{L::kParams, "weight", "tp", "R"}}, {L::kInSrc, L::kInDst}), &native_parallel)
                  .ok());
  ASSERT_TRUE(b.AddNative({}, LayoutDraft(), nullptr).ok());
  ASSERT_TRUE(b.AddPlanEntry("head", Draft({{L::kParams, "q", "tp", "S(0)"}}, {L::kInSrc, L::kInDst})).ok());
  ASSERT_TRUE(b.AddPlanEntry("a_norm", Draft({}, {L::kParams})).ok());
}

TEST(BuilderTest, EveryFieldIsTheParsersInTheParsersOrder) {
  DocumentBuilder b;
  BuildEveryField(b);
  const std::string want = ParsedDescription(kEveryField);
  ASSERT_EQ(want.find("invalid"), std::string::npos) << want;
  EXPECT_EQ(BuiltDescription(b), want);
  // Its JSON is the same document.
  EXPECT_EQ(ParsedDescription(b.ToJson()), want);
}

constexpr char kPlanning[] = R"J({
  "schema": "shardplan.v1",
  "mesh": {"dp": 2, "tp": 4},
  "parameters": {"w": {"shape": [8, 8]}},
  "root": "m",
  "modules": {"m": {"type": "Linear", "forward": ["x"], "params": {"weight": "w"}}},
  "templates": [{"axis": "tp", "prefix": "model", "rules": {"layers.*.q": "colwise", "a.b": "packed_colwise"}},
                {"axis": "dp", "rules": {}},
                {"axis": "tp", "rules": {"x/y~z": "moe_tp_experts"}}],
  "overrides": {"z": {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}, "inner_target": "t"},
                "": {"params": {}}}
})J";

TEST(BuilderTest, TemplatesAndOverridesAreTheParsers) {
  DocumentBuilder b;
  ASSERT_TRUE(b.AddAxis("dp", 2).ok());
  ASSERT_TRUE(b.AddAxis("tp", 4).ok());
  const int64_t shape[] = {8, 8};
  ASSERT_TRUE(b.AddParameter("w", absl::MakeConstSpan(shape), "").ok());
  b.SetRoot("m");
  ASSERT_TRUE(b.AddModule("m", "Linear").ok());
  ASSERT_TRUE(b.AddForwardArg("m", "x").ok());
  ASSERT_TRUE(b.AddModuleParam("m", "weight", "w").ok());
  ASSERT_EQ(*b.AddTemplate("tp", "model"), 0u);
  ASSERT_EQ(*b.AddTemplate("dp", ""), 1u);
  ASSERT_EQ(*b.AddTemplate("tp", ""), 2u);
  // Rules may be added to any template, in any order of templates.
  ASSERT_TRUE(b.AddTemplateRule(2, "x/y~z", "moe_tp_experts").ok());
  ASSERT_TRUE(b.AddTemplateRule(0, "layers.*.q", "colwise").ok());
  ASSERT_TRUE(b.AddTemplateRule(0, "a.b", "packed_colwise").ok());
  LayoutDraft z = Draft({{LayoutDraft::kParams, "weight", "tp", "S(0)"}}, {LayoutDraft::kInSrc, LayoutDraft::kInDst});
  ASSERT_TRUE(z.SetLegacyField("inner_target").ok());
  ASSERT_TRUE(b.AddOverride("z", z).ok());
  ASSERT_TRUE(b.AddOverride("", Draft({}, {LayoutDraft::kParams})).ok());
  const std::string want = ParsedDescription(kPlanning);
  ASSERT_EQ(want.find("invalid"), std::string::npos) << want;
  EXPECT_EQ(BuiltDescription(b), want);
  EXPECT_EQ(ParsedDescription(b.ToJson()), want);
}

TEST(BuilderTest, EqualLayoutsShareOneStoredBodyAsParsedOnesDo) {
  DocumentBuilder b;
  BuildEveryField(b);
  ParsedDocument built = b.Build(Limits{});
  ASSERT_TRUE(built.document);
  const Document& doc = *built.document;
  // a_norm and z_attn.inner give the same layout; the native one differs.
  EXPECT_EQ(doc.model_providers[0].layout.body, doc.model_providers[1].layout.body);
  EXPECT_NE(doc.model_providers[0].layout.body, doc.native[0].sharding.body);
  // in_src and in_dst {"x": {}} are one stored map.
  EXPECT_EQ(doc.model_providers[0].layout.in_src().get(), doc.model_providers[0].layout.in_dst().get());
}

TEST(BuilderTest, ABuiltDocumentIsItsOwnAndTheBuilderGoesOn) {
  DocumentBuilder b;
  BuildEveryField(b);
  ParsedDocument first = b.Build(Limits{});
  ASSERT_TRUE(first.document);
  const std::string before = Describe(*first.document);
  ASSERT_TRUE(b.AddAxis("pp", 2).ok());
  ASSERT_TRUE(b.AddModule("extra", "").ok());
  ASSERT_TRUE(b.AddChild("model", "extra", "extra").ok());
  ASSERT_TRUE(b.AddProvider("extra", Draft({}, {LayoutDraft::kParams})).ok());
  EXPECT_EQ(Describe(*first.document), before);
  ParsedDocument second = b.Build(Limits{});
  ASSERT_TRUE(second.document);
  EXPECT_EQ(second.document->mesh.size(), 3u);
  EXPECT_EQ(second.document->modules.size(), 4u);
  EXPECT_EQ(Describe(*second.document), ParsedDescription(b.ToJson()));
}

// ---- What Build reports: the parser's diagnostic for the same JSON --------

// Builds `b`, parses its JSON and the hand-written `json`: one diagnostic.
void ExpectSameDiagnostic(const DocumentBuilder& b, std::string_view json, std::string_view message,
                          std::string_view pointer, const Limits& limits = {}) {
  ParsedDocument built = b.Build(limits);
  ASSERT_TRUE(built.error.has_value());
  EXPECT_EQ(built.error->code, "invalid-document");
  EXPECT_EQ(built.error->message, message);
  EXPECT_EQ(built.error->pointer, std::string(pointer));
  for (const std::string& text : {b.ToJson(), std::string(json)}) {
    ParseResult parsed = ParseDocument(text, limits);
    ASSERT_TRUE(parsed.error.has_value()) << text;
    EXPECT_EQ(parsed.error->message, built.error->message) << text;
    EXPECT_EQ(parsed.error->pointer, built.error->pointer) << text;
    EXPECT_EQ(parsed.error->severity, built.error->severity);
  }
}

// A builder with modules root -> (a -> leaf, b -> leaf) and parameter w.
void Diamond(DocumentBuilder& b) {
  ASSERT_TRUE(b.AddParameter("w", std::nullopt, "").ok());
  for (const char* m : {"root", "a", "b", "leaf"}) ASSERT_TRUE(b.AddModule(m, "").ok());
  ASSERT_TRUE(b.AddChild("root", "a", "a").ok());
  ASSERT_TRUE(b.AddChild("root", "b", "b").ok());
  ASSERT_TRUE(b.AddChild("a", "x", "leaf").ok());
  ASSERT_TRUE(b.AddChild("b", "x", "leaf").ok());
  ASSERT_TRUE(b.AddModuleParam("leaf", "weight", "w").ok());
}

// Diamond's JSON, with more children of a, params of leaf and modules.
std::string DiamondJson(std::string_view a_children = "", std::string_view leaf_params = "",
                        std::string_view modules = "", std::string_view root = "root") {
  return absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {}, "parameters": {"w": {}}, "root": ")J", root,
                      R"J(", "modules": {"root": {"children": {"a": "a", "b": "b"}}, "a": {"children": {"x": "leaf")J",
                      a_children, R"J(}}, "b": {"children": {"x": "leaf"}}, "leaf": {"params": {"weight": "w")J",
                      leaf_params, "}}", modules, "}}");
}

TEST(BuilderTest, ADiamondBuildsAndCountsItsPaths) {
  DocumentBuilder b;
  Diamond(b);
  b.SetRoot("root");
  ParsedDocument built = b.Build(Limits{});
  ASSERT_TRUE(built.document) << built.error->message;
  EXPECT_EQ(built.document->tree_paths, 5u);  // root, a, a.x, b, b.x
  EXPECT_EQ(BuiltDescription(b), ParsedDescription(DiamondJson()));
}

TEST(BuilderTest, AMissingRootIsTheParsersMissingKey) {
  DocumentBuilder b;
  Diamond(b);
  ParsedDocument built = b.Build(Limits{});
  ASSERT_TRUE(built.error.has_value());
  EXPECT_EQ(built.error->message, "missing required key 'root' (at the document root)");
  EXPECT_EQ(built.error->pointer, "");
  ParseResult parsed = ParseDocument(b.ToJson(), Limits{});
  ASSERT_TRUE(parsed.error.has_value());
  EXPECT_EQ(parsed.error->message, built.error->message);
}

TEST(BuilderTest, DanglingReferencesAreTheParsersDiagnostics) {
  {
    DocumentBuilder b;
    Diamond(b);
    b.SetRoot("root");
    ASSERT_TRUE(b.AddChild("a", "y/~", "ghost").ok());
    ExpectSameDiagnostic(b, DiamondJson(R"(, "y/~": "ghost")"),
                         "unknown module id 'ghost' (at /modules/a/children/y~1~0)", "/modules/a/children/y~1~0");
  }
  {
    // The first module in document order reports, its children before its
    // params.
    DocumentBuilder b;
    Diamond(b);
    b.SetRoot("root");
    ASSERT_TRUE(b.AddModuleParam("b", "bias", "nope").ok());
    ASSERT_TRUE(b.AddChild("b", "z", "ghost").ok());
    ASSERT_TRUE(b.AddModuleParam("leaf", "bias", "nope").ok());
    ParsedDocument built = b.Build(Limits{});
    ASSERT_TRUE(built.error.has_value());
    EXPECT_EQ(built.error->message, "unknown module id 'ghost' (at /modules/b/children/z)");
    ParseResult parsed = ParseDocument(b.ToJson(), Limits{});
    EXPECT_EQ(parsed.error->message, built.error->message);
  }
  {
    DocumentBuilder b;
    Diamond(b);
    b.SetRoot("root");
    ASSERT_TRUE(b.AddModuleParam("leaf", "bias", "nope").ok());
    ExpectSameDiagnostic(b, DiamondJson("", R"(, "bias": "nope")"),
                         "unknown parameter id 'nope' (at /modules/leaf/params/bias)", "/modules/leaf/params/bias");
  }
  {
    DocumentBuilder b;
    Diamond(b);
    b.SetRoot("trunk");
    ExpectSameDiagnostic(b, DiamondJson("", "", "", "trunk"), "unknown module id 'trunk' (at /root)", "/root");
  }
}

TEST(BuilderTest, CyclesAreTheParsersEvenWhenUnreachable) {
  DocumentBuilder b;
  Diamond(b);
  b.SetRoot("root");
  ASSERT_TRUE(b.AddModule("p", "").ok());
  ASSERT_TRUE(b.AddModule("q", "").ok());
  ASSERT_TRUE(b.AddChild("p", "next", "q").ok());
  ASSERT_TRUE(b.AddChild("q", "back", "p").ok());
  ExpectSameDiagnostic(b, DiamondJson("", "", R"(, "p": {"children": {"next": "q"}}, "q": {"children": {"back": "p"}})"),
                       "cycle in children: module 'p' contains itself (at /modules/q/children/back)",
                       "/modules/q/children/back");
}

TEST(BuilderTest, PathLimitsAreTheParsers) {
  DocumentBuilder b;
  Diamond(b);
  b.SetRoot("root");
  Limits limits;
  limits.max_paths = 4;
  ExpectSameDiagnostic(b, DiamondJson(),
                       "the module tree expands to more than 4 module paths (shared submodules multiply paths); "
                       "raise the path limit if this is intended (at /modules)",
                       "/modules", limits);
  limits = {};
  limits.max_fqn_bytes = 9;  // "a", "a.x", "b", "b.x" and a separator each: 12
  ExpectSameDiagnostic(b, DiamondJson(),
                       "the module paths' names total more than 9 bytes; raise the limit if this is intended "
                       "(at /modules)",
                       "/modules", limits);
  limits.max_fqn_bytes = 12;
  EXPECT_TRUE(b.Build(limits).document);
}

TEST(BuilderTest, SizesBeyond2To63BytesAreTheParsers) {
  // One parameter too large: AddParameter refuses it with the parser's
  // message (the parser's pointer is its shape).
  DocumentBuilder b;
  Diamond(b);
  b.SetRoot("root");
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40}, half[] = {int64_t{1} << 62};
  EXPECT_EQ(b.AddParameter("big", absl::MakeConstSpan(huge), "").message(),
            "the size of parameter 'big' exceeds 2^63 - 1 bytes (its elements times 4 bytes of float32)");
  ParseResult parsed =
      ParseDocument(absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {}, "parameters": {"big": {"shape": [)J",
                                 huge[0], ", ", huge[1], R"J(]}}, "root": "m", "modules": {"m": {}}})J"),
                    Limits{});
  ASSERT_TRUE(parsed.error.has_value());
  EXPECT_EQ(parsed.error->message,
            "the size of parameter 'big' exceeds 2^63 - 1 bytes (its elements times 4 bytes of float32) "
            "(at /parameters/big/shape)");
  // Together too large: Build reports it as the parser does, before the
  // other whole-document checks (here an unknown child).
  ASSERT_TRUE(b.AddParameter("h1", absl::MakeConstSpan(half), "int8").ok());
  ASSERT_TRUE(b.Build(Limits{}).document);
  ASSERT_TRUE(b.AddParameter("h2", absl::MakeConstSpan(half), "int8").ok());
  ASSERT_TRUE(b.AddChild("a", "y", "ghost").ok());
  ExpectSameDiagnostic(b, b.ToJson(), "the parameters' sizes total more than 2^63 - 1 bytes (at /parameters)",
                       "/parameters");
}

// ---- What the calls refuse -------------------------------------------------

TEST(BuilderTest, CallsRefuseWhatTheParserRefusesInOneValue) {
  DocumentBuilder b;
  EXPECT_TRUE(b.AddAxis("tp", 2).ok());
  EXPECT_EQ(b.AddAxis("tp", 2).message(), "duplicate mesh axis 'tp'");
  EXPECT_EQ(b.AddAxis("dp", 0).message(), "mesh axis 'dp' must have at least 1 device");
  const int64_t negative[] = {4, -1}, shape[] = {4, 6};
  EXPECT_FALSE(b.AddParameter("w", absl::MakeConstSpan(negative), "").ok());
  EXPECT_FALSE(b.AddParameter("w", absl::MakeConstSpan(shape), "float").ok());
  EXPECT_TRUE(b.AddParameter("w", absl::MakeConstSpan(shape), "").ok());
  EXPECT_EQ(b.AddParameter("w", std::nullopt, "").message(), "duplicate parameter id 'w'");
  EXPECT_TRUE(b.AddModule("m", "").ok());
  EXPECT_EQ(b.AddModule("m", "").message(), "duplicate module id 'm'");
  EXPECT_EQ(b.AddForwardArg("n", "x").message(), "unknown module id 'n' (add it first)");
  EXPECT_TRUE(b.AddChild("m", "c", "m2").ok());
  EXPECT_EQ(b.AddChild("m", "c", "m3").message(), "duplicate child name of module 'm': 'c'");
  EXPECT_EQ(b.AddModuleParam("m", "c", "w").message(), "name 'c' is both a child and a parameter of module 'm'");
  EXPECT_EQ(b.AddModuleParam("m", "", "w").message(), "parameter name must not be empty");
  EXPECT_EQ(b.AddModuleParam("m", "q.weight", "w").message(), "parameter name 'q.weight' must not contain '.'");
  const ParallelDraft unnamed{"", {}};
  EXPECT_EQ(b.SetModuleParallel("m", &unnamed).message(), "binding_kind must not be empty");
  EXPECT_EQ(b.SetFamilyCached("m", LayoutDraft(), nullptr).message(),
            "module 'm' is not a family member (set its family first)");
  EXPECT_EQ(b.SetParameterBlocks("w", std::vector<int64_t>{2, 4}).message(),
            "dim 1 of parameter 'w' of size 6 is not a multiple of its block size 4");
  EXPECT_TRUE(b.AddProvider("c", LayoutDraft()).ok());
  EXPECT_EQ(b.AddProvider("c", LayoutDraft()).message(), "duplicate provider FQN 'c'");
  EXPECT_EQ(b.AddPlanEntry("c", LayoutDraft()).message(), "a plan layout must give params (declare the params map)");
  EXPECT_EQ(b.AddTemplate("dp", "").status().message(), "template axis 'dp' is not a mesh axis (add the axis first)");
  ASSERT_TRUE(b.AddTemplate("tp", "").ok());
  EXPECT_EQ(b.AddTemplateRule(0, "", "colwise").message(), "a template pattern must not be empty");
  EXPECT_FALSE(b.AddTemplateRule(0, "x", "Colwise").ok());
  EXPECT_TRUE(b.AddTemplateRule(0, "x", "colwise").ok());
  EXPECT_EQ(b.AddTemplateRule(0, "x", "rowwise").message(), "duplicate pattern of template 0: 'x'");
  EXPECT_TRUE(b.AddTemplateRule(0, "y", "rowwise").ok());
  EXPECT_EQ(b.DeclarePlan().message(),
            "a document gives either a plan (a final plan to check) or templates/overrides (a plan to make), not both");
  LayoutDraft l;
  EXPECT_EQ(l.Place(LayoutDraft::kParams, "w", "tp", "S(x)").message(),
            "bad placement 'S(x)' (expected S(dim), R, P or P(sum|avg|max|min|prod))");
  EXPECT_TRUE(l.Place(LayoutDraft::kParams, "w", "tp", "S(0)").ok());
  EXPECT_EQ(l.Place(LayoutDraft::kParams, "w", "tp", "R").message(), "axis 'tp' is already placed for 'w'");
  EXPECT_FALSE(l.SetLegacyField("forward").ok());

  // Refused calls change nothing: the document is the one the accepted
  // calls describe.
  ParsedDocument built = b.Build(Limits{});
  ASSERT_TRUE(built.error.has_value());  // no root yet
  b.SetRoot("m");
  ASSERT_TRUE(b.AddModule("m2", "").ok());
  built = b.Build(Limits{});
  ASSERT_TRUE(built.document) << built.error->message;
  EXPECT_EQ(Describe(*built.document), ParsedDescription(b.ToJson()));
  EXPECT_EQ(built.document->templates[0].rules.size(), 2u);
  EXPECT_TRUE(built.document->parameters[0].blocks.empty());
}

TEST(BuilderTest, EmptyMeansTheFormatsDefault) {
  DocumentBuilder b;
  ASSERT_TRUE(b.AddParameter("w", std::nullopt, "").ok());
  ASSERT_TRUE(b.AddModule("m", "").ok());
  b.SetRoot("m");
  ParsedDocument built = b.Build(Limits{});
  ASSERT_TRUE(built.document);
  EXPECT_EQ(built.document->parameters[0].dtype, Dtype::kFloat32);
  EXPECT_FALSE(built.document->parameters[0].shape.has_value());
  EXPECT_EQ(built.document->modules[0].type, kNoName);
  EXPECT_FALSE(built.document->plan.has_value());
}

// ---- The JSON writer ----------------------------------------------------------

TEST(DocumentJsonTest, EveryValidCaseReadsBackAsTheSameDocument) {
  int compared = 0;
  for (const char* dir : {"tests/conformance/cases", "tests/golden/cases"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".json") continue;
      SCOPED_TRACE(entry.path().string());
      ParseResult parsed = ParseDocument(ReadFile(entry.path()).value(), Limits{});
      if (parsed.error) continue;
      const std::string json = DocumentToJson(*parsed.document);
      EXPECT_EQ(ParsedDescription(json), Describe(*parsed.document)) << json;
      ++compared;
    }
  }
  EXPECT_GE(compared, 200);
}

TEST(DocumentJsonTest, ForwardSignaturesReadBackAsTheSameModule) {
  for (const std::vector<std::string>& forward : std::vector<std::vector<std::string>>{
           {},
           {"x"},
           {"*args", "**kwargs"},
           {"x", "*args", "**kwargs"},
           {"**kwargs", "x"},
           {"*a", "*b"},
           {"***x"},
           {"*", "**", ""},
           {"x", "**x", "*x", "x"},
           {"*x", "x", "**y"},
       }) {
    DocumentBuilder b;
    ASSERT_TRUE(b.AddModule("m", "").ok());
    for (const std::string& f : forward) ASSERT_TRUE(b.AddForwardArg("m", f).ok());
    b.SetRoot("m");
    SCOPED_TRACE(absl::StrJoin(forward, " "));
    const std::string built = BuiltDescription(b);
    EXPECT_EQ(ParsedDescription(b.ToJson()), built);
    ParsedDocument doc = b.Build(Limits{});
    ASSERT_TRUE(doc.document);
    EXPECT_EQ(ParsedDescription(DocumentToJson(*doc.document)), built);
  }
}

TEST(DocumentJsonTest, PythonSignaturesKeepTheirSpelling) {
  DocumentBuilder b;
  ASSERT_TRUE(b.AddModule("m", "").ok());
  for (const char* f : {"*args", "**kwargs"}) ASSERT_TRUE(b.AddForwardArg("m", f).ok());
  b.SetRoot("m");
  EXPECT_NE(b.ToJson().find(R"("*args",)"), std::string::npos) << b.ToJson();
  EXPECT_NE(b.ToJson().find(R"("**kwargs")"), std::string::npos) << b.ToJson();
}

}  // namespace
}  // namespace shardplan

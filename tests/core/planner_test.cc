// Building the final plan from owners, templates and overrides.
#include "core/planning/planner.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/ownership/claims.h"
#include "core/ownership/collect.h"
#include "core/model/parse.h"
#include "core/planning/styles.h"
#include "core/planning/templates.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A two-layer model: attention (a family owner), an MLP, a tied embedding
// and head; `extra` adds templates/overrides/providers at the top level.
std::string Doc(std::string_view extra) {
  return absl::StrCat(R"J({
  "schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4},
  "parameters": {"emb": {"shape": [128, 16]}, "q": {"shape": [16, 16]}, "up": {"shape": [64, 16]},
                 "up_b": {"shape": [64]}, "down": {"shape": [16, 64]}},
  "root": "model",
  "modules": {
    "model": {"children": {"embed": "embed", "layers": "layers", "lm_head": "head"}},
    "embed": {"type": "Embedding", "forward": ["input"], "params": {"weight": "emb"}},
    "head": {"type": "Linear", "forward": ["input"], "params": {"weight": "emb"}},
    "layers": {"children": {"0": "layer"}},
    "layer": {"children": {"attn": "attn", "mlp": "mlp"}},
    "attn": {"forward": ["*args", "hidden"], "params": {"q": "q"},
             "family": {"sharding": {"params": {"q": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}}},
    "mlp": {"children": {"up_proj": "up", "down_proj": "down"}},
    "up": {"type": "Linear", "forward": ["x"], "params": {"weight": "up", "bias": "up_b"}},
    "down": {"type": "Linear", "forward": ["x"], "params": {"weight": "down"}}
  })J", extra, "}");
}

struct Planned {
  std::unique_ptr<Document> doc;
  std::unique_ptr<ModuleTree> tree;
  BuiltPlan plan;
  std::vector<Diagnostic> diagnostics;

  std::string Entry(std::string_view fqn) const {
    for (size_t i = 0; i < plan.entries.size(); ++i) {
      if (doc->Name(plan.entries[i].fqn) != fqn) continue;
      const Layout& l = plan.entries[i].layout;
      std::string out;
      auto map = [&](std::string_view key, const MapRef& m) {
        if (!m) return;
        absl::StrAppend(&out, key, "{");
        for (const PlacementEntry& e : *m) {
          absl::StrAppend(&out, doc->Name(e.name), ":");
          for (const AxisPlacement& a : e.placements) {
            absl::StrAppend(&out, doc->Name(a.axis), "=", FormatPlacement(a.placement), ";");
          }
        }
        absl::StrAppend(&out, "} ");
      };
      map("params", l.params());
      map("in_src", l.in_src());
      map("in_dst", l.in_dst());
      map("out_src", l.out_src());
      map("out_dst", l.out_dst());
      absl::StrAppend(&out, "<-");
      for (const std::string& p : plan.provenance[i]) absl::StrAppend(&out, " ", p);
      return out;
    }
    return "<none>";
  }
  std::vector<std::string> Codes() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : diagnostics) out.push_back(absl::StrCat(SeverityName(d.severity), ":", d.code));
    return out;
  }
};

Planned PlanText(const std::string& text) {
  Planned out;
  ParseResult parsed = ParseDocument(text, {});
  EXPECT_FALSE(parsed.error.has_value()) << parsed.error->message;
  out.doc = std::move(parsed.document);
  out.tree = std::make_unique<ModuleTree>(*out.doc);
  Owners owners(out.doc->modules.size());
  DiagnosticSink sink;
  CollectOwners(*out.tree, owners, sink);
  const Claims claims = AssignParameters(*out.tree, owners, /*check_omissions=*/true, sink);
  out.plan = BuildPlan(*out.doc, *out.tree, std::as_const(owners).InOrder(), claims.declared, sink);
  ReportUnplanned(*out.tree, out.plan.entries, sink);
  out.diagnostics = sink.Take();
  return out;
}

Planned Plan(std::string_view extra) { return PlanText(Doc(extra)); }

// An owner's provenance says how collection found it: a model provider, a
// family (cached or not) or a native request (the first and the last).
TEST(PlannerTest, OwnersProvenanceNamesTheirKind) {
  const std::string providers = R"J(, "providers": {
      "sharding": {"embed": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}}},
      "native": [{"match": ["layers.0.mlp.up_proj"], "sharding": {"params": {"weight": {}, "bias": {}}, "in_src": {}, "in_dst": {}}},
                 {"match": ["nowhere"], "sharding": {"params": {}, "in_src": {}, "in_dst": {}}},
                 {"match": ["*.down_proj"], "sharding": {"params": {"weight": {}}, "in_src": {}, "in_dst": {}}}]})J";
  const std::string cached = R"J("family": {"sharding": {"params": {"q": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}},
      "cached": {"sharding": {"params": {"q": {"tp": "S(0)"}}, "in_src": {"hidden": {}}, "in_dst": {"hidden": {}}}}})J";
  std::string text = Doc(providers);
  for (bool cache : {false, true}) {
    if (cache) {
      const std::string plain = R"J("family": {"sharding": {"params": {"q": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}})J";
      ASSERT_NE(text.find(plain), std::string::npos);
      text.replace(text.find(plain), plain.size(), cached);
    }
    Planned p = PlanText(text);
    EXPECT_EQ(p.Codes(), (std::vector<std::string>{"error:native-no-match"})) << cache;
    auto provenance = [&](std::string_view fqn) {
      const std::string entry = p.Entry(fqn);
      return entry.substr(entry.rfind("<- ") + 3);
    };
    EXPECT_EQ(provenance("embed"), "owned:model");
    EXPECT_EQ(provenance("layers.0.attn"), "owned:family") << cache;
    EXPECT_EQ(provenance("layers.0.mlp.up_proj"), "owned:native");
    EXPECT_EQ(provenance("layers.0.mlp.down_proj"), "owned:native");
  }
}

TEST(PlannerTest, OwnersEnterFirstThenTemplatesOnTheRest) {
  Planned p = Plan(R"J(, "templates": [{"axis": "tp", "prefix": "layers", "rules": {
      "*.mlp.up_proj": "colwise", "*.mlp.down_proj": "rowwise", "*.attn": "colwise"}}])J");
  ASSERT_EQ(p.plan.entries.size(), 3u);
  EXPECT_EQ(p.Entry("layers.0.attn"), "params{q:tp=S(0);} in_src{} in_dst{} <- owned:family");
  EXPECT_EQ(p.Entry("layers.0.mlp.up_proj"),
            "params{weight:tp=S(-2);bias:tp=S(-1);} in_src{x:tp=R;} in_dst{x:tp=R;} out_src{output:tp=S(-1);} "
            "out_dst{output:tp=S(-1);} <- template:tp:*.mlp.up_proj");
  EXPECT_EQ(p.Entry("layers.0.mlp.down_proj"),
            "params{weight:tp=S(-1);} in_src{x:tp=S(-1);} in_dst{x:tp=S(-1);} out_src{output:tp=P;} "
            "out_dst{output:tp=R;} <- template:tp:*.mlp.down_proj");
  // The rule on the owned attention is skipped with a warning; the tied
  // embedding is left unplanned (an info).
  EXPECT_EQ(p.Codes(), (std::vector<std::string>{"warning:template-skipped-owned", "info:unplanned-parameters"}));
  EXPECT_EQ(p.diagnostics[0].fqn, "layers.0.attn");
  EXPECT_EQ(p.diagnostics[0].pointer, "/templates/0/rules/*.attn");
  EXPECT_EQ(p.diagnostics[1].message, "1 parameter is declared by no plan entry and stays replicated: embed.weight");
}

TEST(PlannerTest, EmbeddingVariantsParameterRulesAndMerging) {
  Planned p = Plan(R"J(, "templates": [
      {"axis": "tp", "rules": {"embed": "colwise", "layers.*.mlp.up_proj.bias": "grouped_gemm"}},
      {"axis": "dp", "rules": {"embed": "replicate", "lm_head.weight": "rowwise"}}])J");
  // Embedding colwise shards the hidden dim; the dp template merges in.
  EXPECT_EQ(p.Entry("embed"),
            "params{weight:tp=S(-1);dp=R;} in_src{input:tp=R;} in_dst{input:tp=R;} out_src{output:tp=S(-1);} "
            "out_dst{output:tp=S(-1);} <- template:tp:embed template:dp:embed");
  // A parameter rule places that parameter only (the style's weight
  // placement), in the entry of the module registering it.
  EXPECT_EQ(p.Entry("layers.0.mlp.up_proj"), "params{bias:tp=S(0);} in_src{} in_dst{} <- template:tp:layers.*.mlp.up_proj.bias");
  EXPECT_EQ(p.Entry("lm_head"), "params{weight:dp=S(-1);} in_src{} in_dst{} <- template:dp:lm_head.weight");
}

TEST(PlannerTest, ConflictsUnusedRulesAndOverrides) {
  Planned p = Plan(R"J(, "templates": [
      {"axis": "tp", "rules": {"lm_head": "colwise", "nothing.here": "rowwise"}},
      {"axis": "tp", "rules": {"lm_head": "rowwise"}}],
    "overrides": {"lm_head": {"params": {"weight": {"tp": "R"}}, "in_src": {}, "in_dst": {}},
                  "layers.0.mlp.down_proj": {"params": {}, "in_src": {}, "in_dst": {}}})J");
  // rowwise over colwise on lm_head: the weight and both ports (each a
  // source -> destination pair) conflict.
  EXPECT_EQ(p.Codes(), (std::vector<std::string>{"warning:unused-template-rule", "error:template-conflict",
                                                 "error:template-conflict", "error:template-conflict",
                                                 "info:unplanned-parameters"}));
  EXPECT_EQ(p.diagnostics[2].message, "templates place port in:input of 'lm_head' twice on axis 'tp' (rule 'lm_head')");
  EXPECT_EQ(p.diagnostics[0].pointer, "/templates/0/rules/nothing.here");
  EXPECT_EQ(p.diagnostics[1].message, "templates place parameter 'lm_head.weight' twice on axis 'tp' (rule 'lm_head')");
  // Overrides replace the entry whole (provenance too) or are appended.
  EXPECT_EQ(p.Entry("lm_head"), "params{weight:tp=R;} in_src{} in_dst{} <- override");
  EXPECT_EQ(p.Entry("layers.0.mlp.down_proj"), "params{} in_src{} in_dst{} <- override");
}

// Which rule contributes to which entry, and which rules are skipped or
// unused, follow the rules' order, then named_modules, then
// named_parameters order, as if each rule were matched against every path
// on its own (TemplatePattern), whatever literal and '*' rules the
// templates mix.
TEST(PlannerTest, RulesApplyInRuleThenPathOrderAsIfMatchedOneByOne) {
  const std::vector<std::string> words = {"layers", "0", "mlp", "up_proj", "down_proj", "attn", "q",
                                          "embed", "lm_head", "weight", "bias", "*", "*", "x"};
  const std::vector<std::string> styles = {"colwise", "rowwise", "replicate", "moe_tp_experts", "grouped_gemm"};
  std::mt19937 rng(40);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  for (int trial = 0; trial < 150; ++trial) {
    SCOPED_TRACE(trial);
    // The templates, and each rule as the definition reads it.
    struct Rule {
      std::string axis, prefix, pattern, pointer;
      Style style;
    };
    std::vector<Rule> rules;
    std::string templates;
    const size_t count = 1 + pick(3);
    for (size_t t = 0; t < count; ++t) {
      const std::string axis = pick(2) == 0 ? "tp" : "dp";
      const std::string prefix = pick(4) == 0 ? "layers" : "";
      std::vector<std::string> members;
      std::vector<std::string> seen;
      for (size_t r = 0, n = 1 + pick(6); r < n; ++r) {
        std::vector<std::string> segments(1 + pick(5));
        for (std::string& segment : segments) segment = words[pick(words.size())];
        const std::string pattern = absl::StrJoin(segments, ".");
        if (std::find(seen.begin(), seen.end(), pattern) != seen.end()) continue;
        seen.push_back(pattern);
        const std::string style = styles[pick(styles.size())];
        members.push_back(absl::StrCat("\"", pattern, "\": \"", style, "\""));
        rules.push_back({axis, prefix, pattern, absl::StrCat("/templates/", t, "/rules/", pattern), *ParseStyle(style)});
      }
      templates += absl::StrCat(t == 0 ? "" : ", ", R"J({"axis": ")J", axis, R"J(", "prefix": ")J", prefix,
                                R"J(", "rules": {)J", absl::StrJoin(members, ", "), "}}");
    }
    const Planned p = Plan(absl::StrCat(R"J(, "templates": [)J", templates, "]"));
    const ModuleTree& tree = *p.tree;

    // What the definition predicts: each template entry's rules in order of
    // contribution (entries in order of their first one), and the skipped
    // and unused rules.
    std::vector<bool> owned(tree.size(), false);
    for (size_t i = 0; i < p.plan.entries.size(); ++i) {
      if (p.plan.provenance[i][0].rfind("owned:", 0) != 0) continue;
      const PathId o = tree.Resolve(p.doc->Name(p.plan.entries[i].fqn));
      for (PathId q = o; q < tree.end(o); ++q) owned[q] = true;  // no module is shared here
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> entries;
    std::vector<std::vector<const Rule*>> contributed;  // per entry: once per rule
    std::vector<std::string> skipped_and_unused;
    auto contribute = [&](PathId q, const Rule& rule) {
      const std::string fqn(tree.fqn(q));
      size_t e = std::find_if(entries.begin(), entries.end(), [&](const auto& x) { return x.first == fqn; }) -
                 entries.begin();
      if (e == entries.size()) {
        entries.push_back({fqn, {}});
        contributed.emplace_back();
      }
      if (std::find(contributed[e].begin(), contributed[e].end(), &rule) == contributed[e].end()) {
        contributed[e].push_back(&rule);
        entries[e].second.push_back(absl::StrCat("template:", rule.axis, ":", rule.pattern));
      }
    };
    for (const Rule& rule : rules) {
      const TemplatePattern pattern(rule.prefix, rule.pattern);
      bool matched = false;
      for (PathId q = 0; q < tree.size(); ++q) {
        if (!pattern.Matches(tree.fqn(q))) continue;
        matched = true;
        if (owned[q]) {
          skipped_and_unused.push_back(absl::StrCat("skipped ", rule.pointer, " at ", tree.fqn(q)));
        } else {
          contribute(q, rule);
        }
      }
      for (PathId q = 0; q < tree.size(); ++q) {
        for (const auto& [name, slot] : tree.params(q)) {
          if (!pattern.MatchesParameter(tree.fqn(q), p.doc->Name(name))) continue;
          matched = true;
          const Module& module = p.doc->modules[tree.module(q)];
          const bool embedding = module.type != kNoName && p.doc->Name(module.type) == "Embedding";
          if (owned[q]) {
            skipped_and_unused.push_back(absl::StrCat("skipped ", rule.pointer, " at ", tree.fqn(q)));
          } else if (PlacementsOf(rule.style, embedding).weight) {
            contribute(q, rule);
          }
        }
      }
      if (!matched) skipped_and_unused.push_back(absl::StrCat("unused ", rule.pointer));
    }

    std::vector<std::pair<std::string, std::vector<std::string>>> built;
    for (size_t i = 0; i < p.plan.entries.size(); ++i) {
      if (p.plan.provenance[i][0].rfind("template:", 0) == 0) {
        built.emplace_back(p.doc->Name(p.plan.entries[i].fqn), p.plan.provenance[i]);
      }
    }
    EXPECT_EQ(built, entries) << templates;
    std::vector<std::string> reported;
    for (const Diagnostic& d : p.diagnostics) {
      if (d.code == "template-skipped-owned") reported.push_back(absl::StrCat("skipped ", *d.pointer, " at ", *d.fqn));
      if (d.code == "unused-template-rule") reported.push_back(absl::StrCat("unused ", *d.pointer));
    }
    EXPECT_EQ(reported, skipped_and_unused) << templates;
  }
}

}  // namespace
}  // namespace shardplan

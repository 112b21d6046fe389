#include "core/planning/planner.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "core/diagnostics/fixes.h"
#include "core/diagnostics/sink.h"
#include "core/model/nearest.h"
#include "core/text/pyrepr.h"
#include "core/planning/styles.h"
#include "core/planning/templates.h"

namespace shardplan {

namespace {

std::string_view KindName(OwnerKind kind) {
  switch (kind) {
    case OwnerKind::kModel: return "owned:model";
    case OwnerKind::kFamily: return "owned:family";
    case OwnerKind::kNative: return "owned:native";
  }
  return "owned";
}

Layout Reduced(const Owner& owner, const Declarations& declared, MapStore& maps) {
  const Layout& layout = *owner.layout;
  LayoutBody body = *layout.body;
  const absl::Span<const Declarations::Outcome> outcomes = declared.OutcomesOf(owner);
  if (std::find(outcomes.begin(), outcomes.end(), Declarations::Outcome::kDropped) != outcomes.end()) {
    PlacementMap kept;
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (outcomes[i] != Declarations::Outcome::kDropped) kept.push_back((*layout.params())[i]);
    }
    body.params = maps.Intern(std::move(kept));
  }
  if (!body.out_names) body.out_names = NormalizedOutNames(layout);
  return {maps.Intern(std::move(body)), layout.origin};
}

PlacementEntry& EntryNamed(PlacementMap& map, NameId name) {
  for (PlacementEntry& e : map) {
    if (e.name == name) return e;
  }
  // Built in place: moving a temporary in made GCC 12 warn (-O2,
  // -Wmaybe-uninitialized) of the empty placements it moves.
  PlacementEntry& added = map.emplace_back();
  added.name = name;
  return added;
}

// Builds the template entries: one per module path, in order of first
// contribution.
class TemplatePlanner {
 public:
  TemplatePlanner(Document& doc, const ModuleTree& tree, DiagnosticSink& sink)
      : doc_(doc), tree_(tree), sink_(sink), output_(doc.names.Intern("output")),
        weight_(doc.names.Intern("weight")), bias_(doc.names.Intern("bias")) {}

  // Marks the paths inside some owner's subtree. Subtrees are sets of module
  // identities (the spec's modules(M)): a module an owner contains is
  // inside it at every path where it appears, even outside the owner.
  void MarkOwned(absl::Span<const Owner> owners) {
    std::vector<bool> inside(doc_.modules.size(), false);
    for (const Owner& o : owners) {
      for (PathId q = o.path; q < tree_.end(o.path); ++q) inside[tree_.module(q)] = true;
    }
    owned_.assign(tree_.size(), false);
    for (PathId p = 0; p < tree_.size(); ++p) owned_[p] = inside[tree_.module(p)];
  }

  // Applies every template rule, in document order (templates, then each
  // one's rules), to what it matches.
  void ApplyAll() {
    std::vector<std::pair<const Template*, const TemplateRule*>> rules;
    TemplateIndex index;
    for (const Template& t : doc_.templates) {
      for (const TemplateRule& rule : t.rules) {
        rules.emplace_back(&t, &rule);
        index.Add(t.prefix, rule.pattern);
      }
    }
    if (rules.empty()) return;
    const std::vector<Matches> matches = FindMatches(index);
    for (size_t r = 0; r < rules.size(); ++r) Apply(*rules[r].first, *rules[r].second, matches[r]);
  }

  BuiltPlan Take(BuiltPlan plan) {
    for (Entry& e : entries_) {
      for (const auto& [name, dim] : e.packed) plan.packed.push_back({plan.entries.size(), name, dim});
      LayoutBody body;
      body.params = doc_.maps->Intern(std::move(e.params));
      body.in_src = doc_.maps->Intern(std::move(e.in_src));
      body.in_dst = doc_.maps->Intern(std::move(e.in_dst));
      if (e.out_src) body.out_src = doc_.maps->Intern(std::move(*e.out_src));
      if (e.out_dst) body.out_dst = doc_.maps->Intern(std::move(*e.out_dst));
      plan.entries.push_back({doc_.names.Intern(tree_.fqn(e.path)), {doc_.maps->Intern(std::move(body)), e.origin}});
      plan.provenance.push_back(std::move(e.provenance));
    }
    return plan;
  }

 private:
  // A layout being built: params and in ports always, out ports once a
  // rule places one.
  struct Entry {
    PathId path;
    PlacementMap params, in_src, in_dst;
    std::optional<PlacementMap> out_src, out_dst;
    Origin origin;  // the first contributing rule
    std::vector<std::string> provenance;              // one per contributing rule
    std::vector<const TemplateRule*> rules;           // those rules
    std::vector<std::pair<NameId, int32_t>> packed;  // packed parameters and their fused dim
  };

  // What one rule matches: module paths in path order (named_modules),
  // then parameter paths in path and slot order (named_parameters).
  struct Matches {
    std::vector<PathId> modules;
    std::vector<std::pair<PathId, NameId>> params;
  };

  // Every rule's matches, from one walk of the tree: a path's walk in the
  // index is its parent's and one step by its own name, and a path whose
  // walk reaches nothing has no match in its subtree, which is skipped.
  std::vector<Matches> FindMatches(const TemplateIndex& index) const {
    std::vector<Matches> matches(index.size());
    std::vector<std::pair<PathId, TemplateIndex::State>> open;  // the walks of p's ancestors, the root's first
    TemplateIndex::State here, root, param;
    std::vector<uint32_t> found;
    for (PathId p = 0; p < tree_.size();) {
      // `here`: the walk through p's FQN as it leads its descendants' and
      // its parameters' FQNs; `own`: the walk through p's FQN alone.
      const TemplateIndex::State* own = &here;
      if (p == 0) {
        // The root's FQN "" is one empty segment, yet leads nothing: its
        // children's FQNs are their names alone.
        here = index.Start();
        index.Step(here, "", root);
        own = &root;
      } else {
        while (open.back().first != tree_.parent(p)) open.pop_back();
        index.Step(open.back().second, doc_.Name(tree_.name(p)), here);
      }
      found.clear();
      index.Rules(*own, found);
      for (uint32_t r : found) matches[r].modules.push_back(p);
      if (here.empty()) {
        p = tree_.end(p);
        continue;
      }
      for (const auto& [name, slot] : tree_.params(p)) {
        index.Step(here, doc_.Name(name), param);
        found.clear();
        index.Rules(param, found);
        for (uint32_t r : found) matches[r].params.emplace_back(p, name);
      }
      open.emplace_back(p, here);
      ++p;
    }
    return matches;
  }

  void Apply(const Template& t, const TemplateRule& rule, const Matches& matches) {
    if (const std::optional<LegacyStyle> legacy = LegacyOf(rule.style)) ReportLegacy(rule, *legacy);
    for (PathId p : matches.modules) {
      if (Skipped(p, rule, tree_.fqn(p))) continue;
      const Module& module = doc_.modules[tree_.module(p)];
      const StylePlacements style = PlacementsOf(rule.style, IsEmbedding(module));
      Entry& entry = EntryFor(p, t, rule);
      for (const auto& [name, slot] : module.params) {
        if (name == weight_ && style.weight) Place(entry, p, t, rule, name, *style.weight);
        if (name == bias_ && style.bias) Place(entry, p, t, rule, name, *style.bias);
      }
      if (style.in && module.first_input != kNoName) {
        PlacePort(p, t, rule, "in", entry.in_src, entry.in_dst, module.first_input, *style.in);
      }
      if (style.out) {
        if (!entry.out_src) entry.out_src.emplace();
        if (!entry.out_dst) entry.out_dst.emplace();
        PlacePort(p, t, rule, "out", *entry.out_src, *entry.out_dst, output_, *style.out);
      }
    }
    for (const auto& [p, name] : matches.params) {
      if (Skipped(p, rule, tree_.FullName({p, name}))) continue;
      // The registering module's kind picks the style's variant, as for a
      // module match.
      const std::optional<Placement> weight =
          PlacementsOf(rule.style, IsEmbedding(doc_.modules[tree_.module(p)])).weight;
      if (!weight) continue;
      Place(EntryFor(p, t, rule), p, t, rule, name, *weight);
    }
    if (matches.modules.empty() && matches.params.empty()) {
      sink_.Report(Code::kUnusedTemplateRule, {.pointer = rule.pointer, .fix_it = UnusedRuleFixIt(t, rule)},
                   rule.pattern, StyleName(rule.style), doc_.Name(t.axis));
    }
  }

  // A transformers 4.x style name: what transformers 5 has instead, and the
  // rename when that plans the same.
  void ReportLegacy(const TemplateRule& rule, const LegacyStyle& legacy) {
    std::string now = "transformers 5 has no such style";
    std::shared_ptr<const FixIt> fix_it;
    if (legacy.successor) {
      const std::string_view successor = StyleName(*legacy.successor);
      if (legacy.same_plan) {
        now = absl::StrCat("transformers 5 calls it ", PyRepr(successor));
        fix_it = MakeFixIt(absl::StrCat("write ", PyRepr(successor), ": the plan stays the same"),
                           {ReplaceWithString(rule.pointer, successor)});
      } else {
        now = absl::StrCat("transformers 5 has ", PyRepr(successor), " in its place, which ", legacy.difference);
      }
    }
    sink_.Report(Code::kLegacyStyleName, {.pointer = rule.pointer, .fix_it = fix_it}, rule.pattern,
                 StyleName(rule.style), now);
  }

  // A rule that matched nothing: the nearest pattern under the template's
  // prefix that matches a module or parameter (help only: what the rule
  // would then place is the user's call).
  std::shared_ptr<const FixIt> UnusedRuleFixIt(const Template& t, const TemplateRule& rule) const {
    const std::string under = t.prefix.empty() ? "" : absl::StrCat(t.prefix, ".");
    const std::optional<std::string> nearest =
        NearestPattern(tree_, absl::StrCat(under, rule.pattern), /*params=*/true);
    if (!nearest || !absl::StartsWith(*nearest, under)) return nullptr;
    return MakeFixIt(DidYouMean(std::string_view(*nearest).substr(under.size())));
  }

  bool IsEmbedding(const Module& module) const {
    return module.type != kNoName && doc_.Name(module.type) == "Embedding";
  }

  bool Skipped(PathId p, const TemplateRule& rule, std::string_view what) {
    if (!owned_[p]) return false;
    sink_.Report(Code::kTemplateSkippedOwned, {.fqn = tree_.fqn(p), .pointer = rule.pointer}, rule.pattern, what);
    return true;
  }

  Entry& EntryFor(PathId p, const Template& t, const TemplateRule& rule) {
    auto [it, added] = index_.try_emplace(p, entries_.size());
    if (added) {
      Entry& e = entries_.emplace_back();
      e.path = p;
      // `t` and `rule` are the document's own: their indexes name them.
      e.origin = {Origin::Kind::kTemplateRule, static_cast<uint32_t>(&t - doc_.templates.data()),
                  static_cast<uint32_t>(&rule - t.rules.data())};
    }
    Entry& e = entries_[it->second];
    if (std::find(e.rules.begin(), e.rules.end(), &rule) == e.rules.end()) {
      e.rules.push_back(&rule);
      e.provenance.push_back(absl::StrCat("template:", doc_.Name(t.axis), ":", rule.pattern));
    }
    return e;
  }

  static bool Placed(const PlacementMap& map, NameId name, NameId axis) {
    for (const PlacementEntry& e : map) {
      if (e.name != name) continue;
      for (const AxisPlacement& a : e.placements) {
        if (a.axis == axis) return true;
      }
    }
    return false;
  }

  void Conflict(PathId p, const TemplateRule& rule, std::string what, NameId axis) {
    sink_.Report(Code::kTemplateConflict, {.fqn = tree_.fqn(p), .pointer = rule.pointer}, what, doc_.Name(axis),
                 rule.pattern);
  }

  // Places parameter `name` on the template's axis, or reports a conflict
  // (the first placement stays). A packed style's sharded placement
  // records its fused dim for the shape checks.
  void Place(Entry& entry, PathId p, const Template& t, const TemplateRule& rule, NameId name,
             const Placement& placement) {
    if (Placed(entry.params, name, t.axis)) {
      Conflict(p, rule, absl::StrCat("parameter ", PyRepr(tree_.FullName({p, name}))), t.axis);
      return;
    }
    EntryNamed(entry.params, name).placements.push_back({t.axis, placement});
    if (placement.kind == Placement::Kind::kShard && PlacementsOf(rule.style, false).packed) {
      entry.packed.emplace_back(name, placement.dim);
    }
  }

  // Places a port (`kind` "in" or "out": source and destination together)
  // on the template's axis, or reports one conflict for it.
  void PlacePort(PathId p, const Template& t, const TemplateRule& rule, std::string_view kind, PlacementMap& src,
                 PlacementMap& dst, NameId name, const StylePlacements::Transition& transition) {
    if (Placed(src, name, t.axis) || Placed(dst, name, t.axis)) {
      Conflict(p, rule, absl::StrCat("port ", kind, ":", doc_.Name(name), " of ", PyRepr(tree_.fqn(p))), t.axis);
      return;
    }
    EntryNamed(src, name).placements.push_back({t.axis, transition.first});
    EntryNamed(dst, name).placements.push_back({t.axis, transition.second});
  }

  Document& doc_;
  const ModuleTree& tree_;
  DiagnosticSink& sink_;
  const NameId output_, weight_, bias_;
  std::vector<bool> owned_;
  std::vector<Entry> entries_;
  absl::flat_hash_map<PathId, size_t> index_;
};

}  // namespace

BuiltPlan BuildPlan(Document& doc, const ModuleTree& tree, absl::Span<const Owner> owners,
                    const Declarations& declared, DiagnosticSink& sink) {
  BuiltPlan plan;
  for (const Owner& o : owners) {
    plan.entries.push_back({doc.names.Intern(tree.fqn(o.path)), Reduced(o, declared, *doc.maps)});
    plan.provenance.push_back({std::string(KindName(KindOf(o, tree)))});
  }
  TemplatePlanner templates(doc, tree, sink);
  templates.MarkOwned(owners);
  templates.ApplyAll();
  plan = templates.Take(std::move(plan));
  absl::flat_hash_map<NameId, size_t> by_fqn;
  for (size_t i = 0; i < plan.entries.size(); ++i) by_fqn.emplace(plan.entries[i].fqn, i);
  for (const FqnLayout& o : doc.overrides) {
    auto [it, added] = by_fqn.try_emplace(o.fqn, plan.entries.size());
    if (added) {
      plan.entries.push_back(o);
      plan.provenance.push_back({"override"});
    } else {
      plan.entries[it->second].layout = o.layout;
      plan.provenance[it->second] = {"override"};
      const size_t replaced = it->second;
      plan.packed.erase(std::remove_if(plan.packed.begin(), plan.packed.end(),
                                       [&](const PackedParam& p) { return p.entry == replaced; }),
                        plan.packed.end());
    }
  }
  return plan;
}

std::vector<ParamDeclaration> DeclarationsOf(const ModuleTree& tree, const std::vector<FqnLayout>& plan,
                                             const std::vector<PackedParam>& packed) {
  const Document& doc = tree.doc();
  std::vector<ParamDeclaration> out;
  ModuleTree::Resolver resolver(tree);
  for (size_t i = 0; i < plan.size(); ++i) {
    const FqnLayout& entry = plan[i];
    const PathId path = resolver.Resolve(doc.Name(entry.fqn));
    if (path == kNoPath || !entry.layout.params()) continue;
    for (const PlacementEntry& e : *entry.layout.params()) {
      const ModuleTree::ParamRef ref = resolver.ResolveParameter(path, e.name);
      if (ref.module_path == kNoPath) continue;
      ParamDeclaration& d = out.emplace_back();
      d.param = ref.param;
      d.placements = &e.placements;
      d.fqn = std::string(doc.Name(entry.fqn));
      d.local_name = std::string(doc.Name(e.name));
      d.pointer = doc.DeclarationPointerOf(entry.layout.origin, d.local_name);
      for (const PackedParam& p : packed) {
        if (p.entry == i && p.name == e.name) {
          d.fused_parts = 2;
          d.fused_dim = p.dim;
        }
      }
    }
  }
  return out;
}

std::vector<const NamedPlacements*> PlacementsByParameter(const ModuleTree& tree,
                                                          const std::vector<FqnLayout>& plan) {
  const Document& doc = tree.doc();
  std::vector<const NamedPlacements*> out(doc.parameters.size(), nullptr);
  ModuleTree::Resolver resolver(tree);
  for (const FqnLayout& entry : plan) {
    const PathId path = resolver.Resolve(doc.Name(entry.fqn));
    if (path == kNoPath || !entry.layout.params()) continue;
    for (const PlacementEntry& e : *entry.layout.params()) {
      const ModuleTree::ParamRef ref = resolver.ResolveParameter(path, e.name);
      if (ref.module_path != kNoPath && out[ref.param] == nullptr) out[ref.param] = &e.placements;
    }
  }
  return out;
}

void ReportUnplanned(const ModuleTree& tree, const std::vector<FqnLayout>& plan, DiagnosticSink& sink) {
  const std::vector<const NamedPlacements*> placed = PlacementsByParameter(tree, plan);
  const Document& doc = tree.doc();
  std::vector<bool> seen(doc.parameters.size(), false);
  size_t count = 0;
  std::vector<std::string> first;
  constexpr size_t kNamed = 5;
  for (PathId p = 0; p < tree.size(); ++p) {
    for (const auto& [name, param] : doc.modules[tree.module(p)].params) {
      if (placed[param] != nullptr || seen[param]) continue;
      seen[param] = true;
      ++count;
      if (first.size() < kNamed) first.push_back(tree.FullName({p, name}));
    }
  }
  if (count == 0) return;
  sink.Report(Code::kUnplannedParameters, {},
              absl::StrCat(count, count == 1 ? " parameter is" : " parameters are"), count == 1 ? "stays" : "stay",
              absl::StrJoin(first, ", "), count > first.size() ? absl::StrCat(" and ", count - first.size(), " more") : "");
}

}  // namespace shardplan

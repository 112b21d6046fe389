#include "core/claims.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/messages.h"
#include "core/parse.h"

namespace shardplan {
namespace {

// A layout parameter name resolved against the owner's subtree.
struct Resolved {
  PathId module_path = kNoPath;  // registering module's path
  ParamId param = 0;
  bool found = false;
};

Resolved ResolveParam(const ModuleTree& tree, PathId owner, std::string_view local) {
  Resolved r;
  const size_t dot = local.rfind('.');
  const std::string_view module_part = dot == std::string_view::npos ? std::string_view() : local.substr(0, dot);
  const std::string_view param_part = dot == std::string_view::npos ? local : local.substr(dot + 1);
  if (dot != std::string_view::npos && module_part.empty()) return r;
  const PathId q = tree.ResolveFrom(owner, module_part);
  if (q == kNoPath) return r;
  const NameId name = tree.doc().names.Find(param_part);
  if (name == kNoName) return r;
  const int index = tree.ParamIndex(tree.module(q), name);
  if (index < 0) return r;
  r.module_path = q;
  r.param = tree.doc().modules[tree.module(q)].params[static_cast<size_t>(index)].second;
  r.found = true;
  return r;
}

}  // namespace

Claims AssignParameters(const ModuleTree& tree, Owners& owners, bool check_omissions, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const size_t param_count = doc.parameters.size();
  Claims claims;
  claims.owned.assign(param_count, false);
  claims.placement.resize(param_count);
  claims.canonical.resize(param_count);
  claims.expected.assign(param_count, false);

  const std::vector<Owner*> entries = owners.InOrder();
  std::vector<bool> owner_at(tree.size(), false);
  for (const Owner* o : entries) owner_at[o->path] = true;

  // Stamps (entry index + 1) instead of per-owner sets.
  std::vector<uint32_t> expected_by(param_count, 0), declared_by(param_count, 0);
  std::vector<ParamId> expected;
  for (uint32_t e = 0; e < entries.size(); ++e) {
    Owner& owner = *entries[e];
    if (!owner.layout.params) continue;
    const uint32_t stamp = e + 1;
    const PathId root = owner.path;
    const std::string_view fqn = tree.fqn(root);

    expected.clear();
    for (PathId q = root; q < tree.end(root);) {
      if (q != root && owner_at[q]) {
        q = tree.end(q);
        continue;
      }
      for (const auto& [name, p] : doc.modules[tree.module(q)].params) {
        if (expected_by[p] != stamp) {
          expected_by[p] = stamp;
          expected.push_back(p);
        }
      }
      ++q;
    }

    PlacementMap& params = *owner.layout.params;
    size_t kept = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      PlacementEntry& entry = params[i];
      const std::string_view local = doc.Name(entry.name);
      const std::string full = msg::FullName(fqn, local);
      const std::string pointer = absl::StrCat(owner.layout.pointer, "/params/", JsonPointerToken(local));
      auto report = [&](std::string_view code, std::string message) {
        Diagnostic& d = sink.Error(code, std::move(message));
        d.fqn = std::string(fqn);
        d.parameter = full;
        d.pointer = pointer;
      };
      bool keep = true;
      const Resolved r = ResolveParam(tree, root, local);
      if (!r.found) {
        report("unknown-parameter", msg::UnknownParameter(full));
      } else {
        bool nested = false;
        for (PathId a = r.module_path; a != root && !nested; a = tree.parent(a)) nested = owner_at[a];
        if (nested) {
          report("nested-duplicate", msg::NestedDuplicate(full));
        } else if (claims.owned[r.param]) {
          if (!SamePlacements(claims.placement[r.param], entry.placements)) {
            report("shared-conflict", msg::SharedConflict(full));
          } else {
            keep = false;
          }
        } else {
          claims.owned[r.param] = true;
          claims.placement[r.param] = entry.placements;
          claims.canonical[r.param] = full;
        }
        declared_by[r.param] = stamp;
        if (keep) owner.required.push_back(r.param);
      }
      if (keep) {
        if (kept != i) params[kept] = std::move(entry);
        ++kept;
      }
    }
    params.resize(kept);

    const bool omits = check_omissions && std::any_of(expected.begin(), expected.end(),
                                   [&](ParamId p) { return declared_by[p] != stamp; });
    if (omits) {
      std::vector<std::string> names;
      for (PathId q = root; q < tree.end(root); ++q) {
        for (const auto& [name, p] : doc.modules[tree.module(q)].params) {
          if (expected_by[p] == stamp && declared_by[p] != stamp) {
            names.push_back(msg::FullName(tree.RelativeName(root, q), doc.Name(name)));
          }
        }
      }
      std::vector<std::string_view> views(names.begin(), names.end());
      Diagnostic& d = sink.Error("omitted-parameters", msg::OmittedParameters(fqn, views));
      d.fqn = std::string(fqn);
      d.pointer = absl::StrCat(owner.layout.pointer, "/params");
    }
    for (ParamId p : expected) claims.expected[p] = true;
    std::sort(owner.required.begin(), owner.required.end());
    owner.required.erase(std::unique(owner.required.begin(), owner.required.end()), owner.required.end());
  }

  for (PathId q = 0; q < tree.size(); ++q) {
    for (const auto& [name, p] : doc.modules[tree.module(q)].params) {
      if (!claims.owned[p]) continue;
      std::string full = msg::FullName(tree.fqn(q), doc.Name(name));
      if (full != claims.canonical[p]) claims.aliases.emplace_back(claims.canonical[p], full);
      claims.owned_names.push_back(std::move(full));
    }
  }
  return claims;
}

}  // namespace shardplan

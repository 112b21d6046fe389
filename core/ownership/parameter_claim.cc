#include "core/ownership/parameter_claim.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/diagnostics/fixes.h"
#include "core/model/nearest.h"
#include "core/text/pyrepr.h"

namespace shardplan {
namespace {

// Whether an owner's entry lies at `path` or at one of its ancestors below
// `root`: a slot there belongs to a nested owner.
bool Nested(const ModuleTree& tree, const Owners& owners, PathId root, PathId path) {
  for (PathId a = path; a != root; a = tree.parent(a)) {
    if (owners.FindAt(tree, a) != nullptr) return true;
  }
  return false;
}

// The JSON pointer of `owner`'s declaration `entry`.
std::string EntryPointer(const Document& doc, const Owner& owner, const PlacementEntry& entry) {
  return doc.DeclarationPointerOf(owner.layout->origin, doc.Name(entry.name));
}

// "tp=S(0), dp=R" (document order), or "nothing" for no placement.
std::string PlacementsText(const Document& doc, const NamedPlacements& placements) {
  std::string text;
  for (const AxisPlacement& a : placements) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", doc.Name(a.axis), "=", FormatPlacement(a.placement));
  }
  return text.empty() ? "nothing" : text;
}

// `fix_it`: that of a nested duplicate (OwnerParams::native_help) or of a
// shared conflict (ConflictFixIt); an unknown parameter's is made here.
void ReportParameter(const ModuleTree& tree, const Owner& owner, const PlacementEntry& entry, Code code,
                     std::shared_ptr<const FixIt> fix_it, DiagnosticSink& sink) {
  const Document& doc = tree.doc();
  const std::string_view fqn = tree.fqn(owner.path), local = doc.Name(entry.name);
  const std::string full = FullName(fqn, local);
  const std::string pointer = EntryPointer(doc, owner, entry);
  // An unknown parameter: the nearest that exists under the owner, renamed
  // to unless the layout declares that one too. Not for a native request's
  // layout: it serves every module its patterns match, each with parameters
  // of its own, and a pattern matching a module it should not is the likelier
  // mistake.
  if (code == Code::kUnknownParameter && KindOf(owner, tree) != OwnerKind::kNative) {
    if (const std::optional<std::string> nearest = NearestParameter(tree, owner.path, local)) {
      std::vector<FixOperation> fix;
      const PlacementMap& params = *owner.layout->params();
      if (std::none_of(params.begin(), params.end(),
                       [&](const PlacementEntry& e) { return doc.Name(e.name) == *nearest; })) {
        fix.push_back(RenameMember(pointer, *nearest));
      }
      fix_it = MakeFixIt(DidYouMean(FullName(fqn, *nearest)), std::move(fix));
    }
  }
  sink.Report(code, {.fqn = fqn, .parameter = full, .pointer = pointer, .fix_it = fix_it}, full);
}

}  // namespace

std::shared_ptr<const FixIt> ConflictFixIt(const Document& doc, std::string_view first_by,
                                           const NamedPlacements& first, const NamedPlacements& here,
                                           std::optional<std::string_view> pointer) {
  std::string help = absl::StrCat(first_by, " places it ", PlacementsText(doc, first), ", this layout ",
                                  PlacementsText(doc, here), "; declare the same placements in both");
  if (!pointer) return MakeFixIt(std::move(help));
  std::vector<std::pair<std::string_view, std::string>> members;
  for (const AxisPlacement& a : first) members.emplace_back(doc.Name(a.axis), FormatPlacement(a.placement));
  return MakeFixIt(std::move(help), {ReplaceWithObject(*pointer, members)});
}

void ScanOwnerParams(const ModuleTree& tree, ModuleTree::Resolver& resolver, const Owners& owners, const Owner& owner,
                     bool check_omissions, OwnerParams& scan) {
  if (!owner.layout->params()) return;
  scan.params = &*owner.layout->params();
  scan.native_help = owners.native_help(owner);
  const PathId root = owner.path;
  // Expected: the slots of the subtree, but for those of nested owners'
  // subtrees.
  for (PathId q = root; q < tree.end(root);) {
    if (q != root && owners.FindAt(tree, q) != nullptr) {
      q = tree.end(q);
      continue;
    }
    for (const auto& [name, p] : tree.params(q)) scan.expected.push_back(p);
    ++q;
  }
  std::sort(scan.expected.begin(), scan.expected.end());
  scan.expected.erase(std::unique(scan.expected.begin(), scan.expected.end()), scan.expected.end());

  absl::InlinedVector<ParamId, 4> declared;  // every parameter a param names, nested ones too
  for (const PlacementEntry& entry : *scan.params) {
    ModuleTree::ParamRef ref = resolver.ResolveParameter(root, entry.name);
    if (ref.module_path != kNoPath) {
      declared.push_back(ref.param);
      if (Nested(tree, owners, root, ref.module_path)) ref.module_path = OwnerParams::kNested;
    }
    scan.resolved.push_back(ref);
  }
  if (!check_omissions) return;
  std::sort(declared.begin(), declared.end());
  auto missing = [&](ParamId p) {
    return std::binary_search(scan.expected.begin(), scan.expected.end(), p) &&
           !std::binary_search(declared.begin(), declared.end(), p);
  };
  if (std::none_of(scan.expected.begin(), scan.expected.end(), missing)) return;
  // Every slot of a missing parameter is named, nested owners' too (a tied
  // parameter has several).
  scan.omitted = std::make_unique<std::vector<std::string>>();
  for (PathId q = root; q < tree.end(root); ++q) {
    for (const auto& [name, p] : tree.params(q)) {
      if (missing(p)) scan.omitted->push_back(FullName(tree.RelativeName(root, q), tree.doc().Name(name)));
    }
  }
}

void ClaimOwnerParams(const ModuleTree& tree, Owner& owner, const OwnerParams& scan, Claims& claims,
                      DiagnosticSink& sink) {
  if (scan.params == nullptr) return;
  for (ParamId p : scan.expected) {
    if (!claims.expected[p]) {
      claims.expected[p] = true;
      ++claims.expected_count;
    }
  }
  using Outcome = Declarations::Outcome;
  owner.declared = static_cast<uint32_t>(claims.declared.params.size());
  for (size_t i = 0; i < scan.params->size(); ++i) {
    const PlacementEntry& entry = (*scan.params)[i];
    const ModuleTree::ParamRef& ref = scan.resolved[i];
    Outcome outcome = Outcome::kRequired;
    if (ref.module_path == kNoPath) {
      ReportParameter(tree, owner, entry, Code::kUnknownParameter, nullptr, sink);
      outcome = Outcome::kRejected;
    } else if (ref.module_path == OwnerParams::kNested) {
      // Both from one native request's patterns: they match too deep.
      ReportParameter(tree, owner, entry, Code::kNestedDuplicate, scan.native_help, sink);
      outcome = Outcome::kRejected;
    } else if (!claims.owned(ref.param)) {
      claims.placement[ref.param] = &entry.placements;
      claims.canonical[ref.param] = {ref.module_path, ref.name};
    } else if (!SamePlacements(*claims.placement[ref.param], entry.placements)) {
      ReportParameter(tree, owner, entry, Code::kSharedConflict,
                      ConflictFixIt(tree.doc(),
                                    absl::StrCat("its first claimant ", PyRepr(claims.CanonicalName(tree, ref.param))),
                                    *claims.placement[ref.param], entry.placements,
                                    EntryPointer(tree.doc(), owner, entry)),
                      sink);
    } else {
      outcome = Outcome::kDropped;
    }
    claims.declared.params.push_back(ref.module_path == kNoPath ? kNoParam : ref.param);
    claims.declared.outcomes.push_back(outcome);
  }
  if (scan.omitted) {
    const std::string_view fqn = tree.fqn(owner.path);
    sink.Report(Code::kOmittedParameters,
                {.fqn = fqn, .pointer = absl::StrCat(tree.doc().PointerOf(owner.layout->origin), "/params")}, fqn,
                std::vector<std::string_view>(scan.omitted->begin(), scan.omitted->end()));
  }
}

}  // namespace shardplan

#include "core/ownership/native_match.h"

#include <string>

#include "core/exec/parallel.h"

namespace shardplan {

std::vector<std::vector<PathId>> MatchingPaths(const ModuleTree& tree, const std::vector<Glob>& globs) {
  std::vector<std::vector<PathId>> matches(globs.size());
  for (size_t g = 0; g < globs.size(); ++g) {
    const Glob& glob = globs[g];
    if (glob.is_literal()) continue;
    // Every match starts with the pattern's literal prefix: if that holds a
    // dot, the matches lie below the module named before its last dot, a
    // contiguous range of paths.
    PathId first = 0, stop = static_cast<PathId>(tree.size());
    const std::string& prefix = glob.literal_prefix();
    if (const size_t dot = prefix.rfind('.'); dot != std::string::npos) {
      const PathId below = tree.Resolve(std::string_view(prefix).substr(0, dot));
      if (below == kNoPath) continue;
      first = below + 1;
      stop = tree.end(below);
    }
    matches[g] = ParallelGather<PathId>(first, stop, 4096, [&](size_t lo, size_t hi, std::vector<PathId>& found) {
      for (PathId p = static_cast<PathId>(lo); p < hi; ++p) {
        if (tree.ascii() ? glob.MatchesAscii(tree.fqn(p)) : glob.Matches(tree.fqn(p))) found.push_back(p);
      }
    });
  }
  return matches;
}

std::vector<uint32_t> NativePatterns(const ModuleTree& tree, absl::Span<const Owner> owners) {
  const Document& doc = tree.doc();
  std::vector<uint32_t> patterns(owners.size(), kNotNative);
  std::vector<std::vector<Glob>> globs(doc.native.size());  // per request, compiled when first needed
  for (size_t i = 0; i < owners.size(); ++i) {
    const Origin& origin = owners[i].layout->origin;
    if (origin.kind != Origin::Kind::kNativeSharding) continue;
    const NativeRequest& request = doc.native[origin.index];
    std::vector<Glob>& compiled = globs[origin.index];
    if (compiled.empty()) {
      for (NameId pattern : request.match) compiled.emplace_back(doc.Name(pattern));
    }
    const std::string_view fqn = tree.fqn(owners[i].path);
    for (uint32_t k = 0; k < compiled.size(); ++k) {
      if (compiled[k].Matches(fqn)) {
        patterns[i] = k;
        break;
      }
    }
  }
  return patterns;
}

}  // namespace shardplan

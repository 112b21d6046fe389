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

}  // namespace shardplan

#include "core/ownership/native_match.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "core/exec/parallel.h"

namespace shardplan {
namespace {

// The distinct literal tails of a set of patterns (Glob::literal_tail), and
// for a text, the tails that end it.
//
// A trie of the tails read backwards: reading a text from its last byte,
// one step per byte, meets each tail the text ends with, shortest first,
// and stops at the first byte that no tail has there. A text costs at most
// min(its length, the longest tail's) steps, however many tails there are.
// Tails and texts are UTF-8: a text ends with a tail's bytes exactly when it
// ends with its characters.
class TailIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The id of `tail` (not empty), added if new; ids count from 0.
  uint32_t Add(std::string_view tail) {
    uint32_t node = 0;
    for (size_t i = tail.size(); i-- > 0;) {
      const auto [it, added] = child_.try_emplace(Edge(node, tail[i]), static_cast<uint32_t>(tail_at_.size()));
      if (added) tail_at_.push_back(kNone);
      node = it->second;
    }
    if (tail_at_[node] == kNone) tail_at_[node] = count_++;
    return tail_at_[node];
  }
  // How many distinct tails were added.
  uint32_t size() const { return count_; }

  // Calls found(id) for each added tail that `text` ends with. Safe to call
  // from several threads at once.
  template <typename Found>
  void ForEachTailOf(std::string_view text, Found&& found) const {
    uint32_t node = 0;
    for (size_t i = text.size(); i-- > 0;) {
      const auto it = child_.find(Edge(node, text[i]));
      if (it == child_.end()) return;
      node = it->second;
      if (tail_at_[node] != kNone) found(tail_at_[node]);
    }
  }

 private:
  static uint64_t Edge(uint32_t node, char byte) { return uint64_t{node} << 8 | static_cast<unsigned char>(byte); }

  // Edge(node, byte) -> the node reached by reading `byte` next.
  absl::flat_hash_map<uint64_t, uint32_t> child_;
  // Per node (0: the root, nothing read): the id of the tail read to it, or
  // kNone.
  std::vector<uint32_t> tail_at_ = {kNone};
  uint32_t count_ = 0;
};

// Per glob, the positions in `paths` (path ids, ascending) of the paths
// whose FQN it matches, ascending. A literal glob matches the one path it
// spells, found by name.
//
// Every match of a glob starts with its literal prefix and ends with its
// literal tail, so a glob is tested only on the paths that can satisfy
// both: if the prefix holds a dot, the paths below the module named before
// its last dot (a contiguous range of path ids); and if the glob has a tail,
// among those, the paths whose FQN ends with it, which one TailIndex walk
// over every path finds for all the globs' tails at once.
std::vector<std::vector<uint32_t>> MatchAmong(const ModuleTree& tree, const std::vector<Glob>& globs,
                                              absl::Span<const PathId> paths) {
  // What a glob is tested on: the positions [lo, hi) of `paths` in its
  // prefix's subtree, and there, for a glob with a literal tail, only those
  // that end with it.
  struct Scope {
    uint32_t lo = 0, hi = 0;
    uint32_t tail = TailIndex::kNone;
  };
  std::vector<Scope> scopes(globs.size());
  const auto position = [&](PathId p) {
    return static_cast<uint32_t>(std::lower_bound(paths.begin(), paths.end(), p) - paths.begin());
  };
  std::vector<std::vector<uint32_t>> matches(globs.size());
  TailIndex tails;
  for (size_t g = 0; g < globs.size(); ++g) {
    const Glob& glob = globs[g];
    if (glob.is_literal()) {
      const std::string& fqn = glob.literal_tail();  // the whole pattern
      if (const PathId p = tree.Resolve(fqn); p != kNoPath && tree.fqn(p) == fqn) {
        const auto [lo, hi] = std::equal_range(paths.begin(), paths.end(), p);
        for (auto it = lo; it != hi; ++it) matches[g].push_back(static_cast<uint32_t>(it - paths.begin()));
      }
      continue;
    }
    PathId first = 0, stop = static_cast<PathId>(tree.size());
    const std::string& prefix = glob.literal_prefix();
    if (const size_t dot = prefix.rfind('.'); dot != std::string::npos) {
      const PathId below = tree.Resolve(std::string_view(prefix).substr(0, dot));
      if (below == kNoPath) continue;
      first = below + 1;
      stop = tree.end(below);
    }
    Scope& scope = scopes[g];
    scope.lo = position(first);
    scope.hi = position(stop);
    if (scope.lo < scope.hi && !glob.literal_tail().empty()) scope.tail = tails.Add(glob.literal_tail());
  }

  // Per tail, the positions of the paths that end with it, ascending.
  std::vector<std::vector<uint32_t>> ending(tails.size());
  if (tails.size() > 0) {
    const std::vector<std::pair<uint32_t, uint32_t>> found = ParallelGather<std::pair<uint32_t, uint32_t>>(
        0, paths.size(), 4096, [&](size_t lo, size_t hi, std::vector<std::pair<uint32_t, uint32_t>>& out) {
          for (size_t i = lo; i < hi; ++i) {
            tails.ForEachTailOf(tree.fqn(paths[i]),
                                [&](uint32_t tail) { out.emplace_back(tail, static_cast<uint32_t>(i)); });
          }
        });
    for (const auto& [tail, i] : found) ending[tail].push_back(i);
  }

  for (size_t g = 0; g < globs.size(); ++g) {
    const Glob& glob = globs[g];
    const Scope& scope = scopes[g];
    if (scope.lo >= scope.hi) continue;
    // Tests the glob on the paths at positions at(k), k in [begin, end).
    const auto test = [&](size_t begin, size_t end, auto at) {
      return ParallelGather<uint32_t>(begin, end, 4096, [&](size_t lo, size_t hi, std::vector<uint32_t>& found) {
        for (size_t k = lo; k < hi; ++k) {
          const uint32_t i = at(k);
          const std::string_view fqn = tree.fqn(paths[i]);
          if (tree.ascii() ? glob.MatchesAscii(fqn) : glob.Matches(fqn)) found.push_back(i);
        }
      });
    };
    if (scope.tail == TailIndex::kNone) {
      matches[g] = test(scope.lo, scope.hi, [](size_t k) { return static_cast<uint32_t>(k); });
    } else {
      const std::vector<uint32_t>& with_tail = ending[scope.tail];
      const auto from = [&](uint32_t i) {
        return static_cast<size_t>(std::lower_bound(with_tail.begin(), with_tail.end(), i) - with_tail.begin());
      };
      matches[g] = test(from(scope.lo), from(scope.hi), [&](size_t k) { return with_tail[k]; });
    }
  }
  return matches;
}

}  // namespace

std::vector<std::vector<PathId>> MatchingPaths(const ModuleTree& tree, const std::vector<Glob>& globs) {
  // Among all paths, a path's position is its id.
  std::vector<PathId> all(tree.size());
  std::iota(all.begin(), all.end(), PathId{0});
  return MatchAmong(tree, globs, all);
}

std::vector<uint32_t> NativePatterns(const ModuleTree& tree, absl::Span<const Owner> owners) {
  const Document& doc = tree.doc();
  std::vector<uint32_t> patterns(owners.size(), kNotNative);
  // The native owners, in path order: (path, index in `owners`).
  std::vector<std::pair<PathId, uint32_t>> native;
  // The patterns of the requests that added an owner, request after
  // request, and where each such request's patterns start among them.
  std::vector<Glob> globs;
  std::vector<uint32_t> first_glob(doc.native.size(), kNotNative);
  std::vector<bool> added(doc.native.size(), false);  // per request: whether it added an owner
  for (uint32_t i = 0; i < owners.size(); ++i) {
    const Origin& origin = owners[i].layout->origin;
    if (origin.kind != Origin::Kind::kNativeSharding) continue;
    native.emplace_back(owners[i].path, i);
    added[origin.index] = true;
  }
  if (native.empty()) return patterns;
  std::sort(native.begin(), native.end());
  std::vector<PathId> paths(native.size());
  for (size_t n = 0; n < native.size(); ++n) paths[n] = native[n].first;
  for (size_t r = 0; r < doc.native.size(); ++r) {
    if (!added[r]) continue;
    first_glob[r] = static_cast<uint32_t>(globs.size());
    for (NameId pattern : doc.native[r].match) globs.emplace_back(doc.Name(pattern));
  }

  const std::vector<std::vector<uint32_t>> matches = MatchAmong(tree, globs, paths);
  // Each owner takes the first pattern of its own request that hits its
  // path: requests' patterns in order, each claiming the owners it hits
  // that have none yet.
  for (uint32_t r = 0; r < doc.native.size(); ++r) {
    if (first_glob[r] == kNotNative) continue;
    const NativeRequest& request = doc.native[r];
    for (uint32_t k = 0; k < request.match.size(); ++k) {
      for (uint32_t n : matches[first_glob[r] + k]) {
        const uint32_t i = native[n].second;
        if (owners[i].layout->origin.index == r && patterns[i] == kNotNative) patterns[i] = k;
      }
    }
  }
  return patterns;
}

std::optional<std::vector<std::string>> NarrowerPatterns(const ModuleTree& tree, std::string_view pattern,
                                                         const std::vector<PathId>& hits) {
  // In path (pre-)order a subtree follows its root: some hit lies below
  // another exactly when one lies below the hit before it.
  bool nested = false;
  for (size_t i = 1; i < hits.size() && !nested; ++i) nested = hits[i] < tree.end(hits[i - 1]);
  if (!nested) return std::nullopt;
  const auto depth = [&](PathId p) { return std::count(tree.fqn(p).begin(), tree.fqn(p).end(), '.'); };
  long shallowest = depth(hits[0]);
  for (PathId p : hits) shallowest = std::min(shallowest, depth(p));
  std::vector<PathId> meant;
  for (PathId p : hits) {
    if (depth(p) == shallowest) meant.push_back(p);
  }
  const std::vector<std::string_view> segments = absl::StrSplit(pattern, '.');
  if (static_cast<long>(segments.size()) != shallowest + 1) return std::nullopt;
  // Per '*' segment: whether every meant hit has digits there.
  std::vector<bool> digits(segments.size(), true);
  std::vector<std::vector<std::string_view>> parts;  // per meant hit, its segments
  for (PathId p : meant) {
    parts.push_back(absl::StrSplit(tree.fqn(p), '.'));
    for (size_t i = 0; i < segments.size(); ++i) {
      const std::string_view part = parts.back()[i];
      digits[i] = digits[i] && !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
                    return c >= '0' && c <= '9';
                  });
    }
  }
  // The patterns with the '*' segments from `first` on made one segment:
  // first the last one alone (what was meant is most often a last '*' that
  // went too deep), then all of them. Kept when they match the meant hits
  // and nothing else.
  const size_t last = static_cast<size_t>(std::find(segments.rbegin(), segments.rend(), "*") - segments.rbegin());
  if (last == segments.size()) return std::nullopt;
  for (const size_t first : {segments.size() - 1 - last, size_t{0}}) {
    std::vector<std::string> narrower;
    for (const std::vector<std::string_view>& part : parts) {
      std::string made;
      for (size_t i = 0; i < segments.size(); ++i) {
        if (i > 0) made += '.';
        if (segments[i] != "*" || i < first) {
          made += segments[i];
          continue;
        }
        for (size_t k = 0; k < part[i].size(); ++k) made += digits[i] ? "[0-9]" : "[!.]";
      }
      if (std::find(narrower.begin(), narrower.end(), made) == narrower.end()) narrower.push_back(std::move(made));
    }
    if (narrower.size() > kMaxNarrowerPatterns) continue;
    std::vector<Glob> globs(narrower.begin(), narrower.end());
    std::vector<PathId> matched;
    for (const std::vector<PathId>& m : MatchingPaths(tree, globs)) matched.insert(matched.end(), m.begin(), m.end());
    std::sort(matched.begin(), matched.end());
    matched.erase(std::unique(matched.begin(), matched.end()), matched.end());
    if (matched == meant) return narrower;
  }
  return std::nullopt;
}

}  // namespace shardplan

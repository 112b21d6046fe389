// Which module paths native requests' glob patterns hit (spec section 4 step
// 4): fnmatch over every FQN, as the reference's named_modules loop does;
// and which pattern added each native owner.
#ifndef SHARDPLAN_CORE_OWNERSHIP_NATIVE_MATCH_H_
#define SHARDPLAN_CORE_OWNERSHIP_NATIVE_MATCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "core/model/module_tree.h"
#include "core/ownership/owners.h"
#include "core/text/glob.h"

namespace shardplan {

// For each pattern, every path whose FQN it matches, in named_modules
// order (a literal pattern: the path it spells, found by name).
// A pattern is tested only on the paths that can match it: those below the
// module its literal prefix names up to its last dot, and among them, those
// that end with its literal tail (Glob::literal_prefix, literal_tail), which
// one walk over the FQNs' last bytes finds for every distinct tail at once.
// So the cost grows with the FQN bytes and those candidates, not with
// patterns x paths; a pattern that ends in a wildcard is still tested on
// every path below its prefix. In parallel over chunks of paths.
std::vector<std::vector<PathId>> MatchingPaths(const ModuleTree& tree, const std::vector<Glob>& globs);

// Per owner of `owners` (entries CollectOwners added from `tree`'s
// document): for a native request's owner, the index in the request's
// `match` of the pattern that added it; kNotNative for any other owner.
// That pattern is the first of the request's that matches the owner's FQN:
// CollectOwners adds a module at the request's first hit of it, patterns in
// order and each pattern's hits in path order, so no earlier pattern hits
// the path it adds the module at. Matches the patterns of the requests that
// added owners against the native owners' FQNs only, as MatchingPaths does.
inline constexpr uint32_t kNotNative = UINT32_MAX;

// For a pattern that matches modules below others it matches (fnmatch's
// '*' crosses dots: "layers.*.experts.*" matches the experts and every
// module below them): patterns that match exactly its shallowest hits.
// The last segment of the pattern that is just '*' (or, if that is not
// enough, each such segment) becomes one path segment of the lengths its
// hits have there ("[0-9]" repeated where every hit has digits, "[!.]"
// repeated otherwise), one pattern per distinct shape, at most
// kMaxNarrowerPatterns. `hits`: the paths the pattern matches, in path
// order. nullopt when no hit lies below another, when the pattern has a
// segment per path segment of its shallowest hits no more, or when the
// patterns made do not match exactly those hits (they are matched to
// check).
inline constexpr size_t kMaxNarrowerPatterns = 8;
std::optional<std::vector<std::string>> NarrowerPatterns(const ModuleTree& tree, std::string_view pattern,
                                                         const std::vector<PathId>& hits);
std::vector<uint32_t> NativePatterns(const ModuleTree& tree, absl::Span<const Owner> owners);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_OWNERSHIP_NATIVE_MATCH_H_

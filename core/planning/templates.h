// Template patterns (planner-v1 section 1): a rule's pattern, under its
// template's prefix, matches a whole module or parameter FQN, where `*` is
// exactly one path segment (one or more characters other than '.') and
// everything else is literal. Unlike native requests' fnmatch globs, `*`
// never crosses a dot, so "layers.*.mlp" matches "layers.0.mlp" only.
#ifndef SHARDPLAN_CORE_PLANNING_TEMPLATES_H_
#define SHARDPLAN_CORE_PLANNING_TEMPLATES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace shardplan {

// One pattern, matched on its own: the definition.
class TemplatePattern {
 public:
  // `prefix + "." + pattern`, or `pattern` when the prefix is empty.
  TemplatePattern(std::string_view prefix, std::string_view pattern);

  bool Matches(std::string_view fqn) const;
  // Matches(module_fqn + "." + name) (name alone at the root), without
  // building the string: for parameter paths.
  bool MatchesParameter(std::string_view module_fqn, std::string_view name) const;

 private:
  // Segments of the full pattern; "*" stands for any one segment. A segment
  // that merely contains '*' next to other characters is literal.
  std::vector<std::string> segments_;
};

// Many patterns at once: the rules numbered 0, 1, ... in the order Add
// gives them, as a trie of their segments (a node per distinct leading run
// of segments, with a child per literal segment and one for "*").
//
// Contract: the rules that Rules(state) lists, in increasing order, after
// a walk from Start() through the segments s1 ... sn by Step, are exactly
// those whose TemplatePattern matches the FQN "s1. ... .sn". So
//   - Matching(fqn) lists the rules whose pattern Matches(fqn), and
//   - MatchingParameter(module_fqn, name) those that MatchesParameter.
// A walk that reaches no node (State::empty()) can match nothing further
// down: the FQNs that start with those segments need no walk.
//
// Cost: a step is one lookup of the segment and a test of "*" per node
// reached, so a walk costs the FQN's depth times the nodes reached at once
// (one or two for literal rules and for plans spelled like Hugging Face's
// base_model_tp_plan), never the number of rules.
class TemplateIndex {
 public:
  // The trie nodes a walk has reached.
  using State = absl::InlinedVector<uint32_t, 2>;

  TemplateIndex();
  // Adds rule number size(): the pattern `prefix + "." + pattern`, or
  // `pattern` when the prefix is empty.
  void Add(std::string_view prefix, std::string_view pattern);
  size_t size() const { return rules_; }

  // The walk before any segment.
  State Start() const { return State{0}; }
  // The walk `from` followed by one more segment (`to` is overwritten).
  void Step(const State& from, std::string_view segment, State& to) const;
  // Appends to `out` the rules whose pattern ends where `state` is, in
  // increasing order.
  void Rules(const State& state, std::vector<uint32_t>& out) const;

  // The rules whose pattern Matches(fqn), in increasing order.
  std::vector<uint32_t> Matching(std::string_view fqn) const;
  // The rules whose pattern MatchesParameter(module_fqn, name), in
  // increasing order.
  std::vector<uint32_t> MatchingParameter(std::string_view module_fqn, std::string_view name) const;

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    absl::flat_hash_map<std::string, uint32_t> literal;  // segment -> child
    uint32_t star = kNone;                                // the "*" child
    std::vector<uint32_t> rules;                          // patterns ending here, increasing
  };
  // Walks `from` through the segments of `dotted` ("" is one empty segment).
  State Walk(State from, std::string_view dotted) const;

  std::vector<Node> nodes_;  // nodes_[0]: the root, before any segment
  uint32_t rules_ = 0;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_TEMPLATES_H_

// Template patterns (planner-v1 section 1): a rule's pattern, under its
// template's prefix, matches a whole module or parameter FQN, where `*` is
// exactly one path segment (one or more characters other than '.') and
// everything else is literal. Unlike native requests' fnmatch globs, `*`
// never crosses a dot, so "layers.*.mlp" matches "layers.0.mlp" only.
#ifndef SHARDPLAN_CORE_PLANNING_TEMPLATES_H_
#define SHARDPLAN_CORE_PLANNING_TEMPLATES_H_

#include <string>
#include <string_view>
#include <vector>

namespace shardplan {

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

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_TEMPLATES_H_

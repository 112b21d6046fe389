#include "core/planning/templates.h"

#include "absl/strings/str_split.h"

namespace shardplan {

TemplatePattern::TemplatePattern(std::string_view prefix, std::string_view pattern) {
  const std::string full = prefix.empty() ? std::string(pattern) : std::string(prefix) + "." + std::string(pattern);
  for (std::string_view segment : absl::StrSplit(full, '.')) segments_.emplace_back(segment);
}

namespace {

bool SegmentMatches(const std::string& pattern, std::string_view segment) {
  return pattern == "*" ? !segment.empty() : segment == pattern;
}

}  // namespace

bool TemplatePattern::Matches(std::string_view fqn) const {
  size_t start = 0;
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (start > fqn.size()) return false;
    size_t end = fqn.find('.', start);
    if (end == std::string_view::npos) end = fqn.size();
    if (!SegmentMatches(segments_[i], fqn.substr(start, end - start))) return false;
    start = end + 1;
  }
  return start == fqn.size() + 1;  // every segment of the FQN consumed
}

bool TemplatePattern::MatchesParameter(std::string_view module_fqn, std::string_view name) const {
  // A parameter name has no dot: it is the last segment.
  if (!SegmentMatches(segments_.back(), name)) return false;
  if (segments_.size() == 1) return module_fqn.empty();
  if (module_fqn.empty()) return false;
  size_t start = 0;
  for (size_t i = 0; i + 1 < segments_.size(); ++i) {
    if (start > module_fqn.size()) return false;
    size_t end = module_fqn.find('.', start);
    if (end == std::string_view::npos) end = module_fqn.size();
    if (!SegmentMatches(segments_[i], module_fqn.substr(start, end - start))) return false;
    start = end + 1;
  }
  return start == module_fqn.size() + 1;
}

}  // namespace shardplan

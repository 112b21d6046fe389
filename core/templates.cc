#include "core/templates.h"

#include "absl/strings/str_split.h"

namespace shardplan {

TemplatePattern::TemplatePattern(std::string_view prefix, std::string_view pattern) {
  const std::string full = prefix.empty() ? std::string(pattern) : std::string(prefix) + "." + std::string(pattern);
  for (std::string_view segment : absl::StrSplit(full, '.')) segments_.emplace_back(segment);
}

bool TemplatePattern::Matches(std::string_view fqn) const {
  size_t start = 0;
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (start > fqn.size()) return false;
    size_t end = fqn.find('.', start);
    if (end == std::string_view::npos) end = fqn.size();
    const std::string_view segment = fqn.substr(start, end - start);
    if (segments_[i] == "*") {
      if (segment.empty()) return false;
    } else if (segment != segments_[i]) {
      return false;
    }
    start = end + 1;
  }
  return start == fqn.size() + 1;  // every segment of the FQN consumed
}

}  // namespace shardplan

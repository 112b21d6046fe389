#include "core/planning/templates.h"

#include <algorithm>

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

TemplateIndex::TemplateIndex() : nodes_(1) {}

void TemplateIndex::Add(std::string_view prefix, std::string_view pattern) {
  const std::string full = prefix.empty() ? std::string(pattern) : std::string(prefix) + "." + std::string(pattern);
  uint32_t node = 0;
  for (std::string_view segment : absl::StrSplit(full, '.')) {
    // Not references into nodes_: adding a node may move them.
    uint32_t child = segment == "*" ? nodes_[node].star : kNone;
    if (segment != "*") {
      const auto it = nodes_[node].literal.find(segment);
      if (it != nodes_[node].literal.end()) child = it->second;
    }
    if (child == kNone) {
      child = static_cast<uint32_t>(nodes_.size());
      if (segment == "*") {
        nodes_[node].star = child;
      } else {
        nodes_[node].literal.emplace(segment, child);
      }
      nodes_.emplace_back();
    }
    node = child;
  }
  nodes_[node].rules.push_back(rules_++);
}

void TemplateIndex::Step(const State& from, std::string_view segment, State& to) const {
  to.clear();
  for (uint32_t n : from) {
    const Node& node = nodes_[n];
    if (const auto it = node.literal.find(segment); it != node.literal.end()) to.push_back(it->second);
    if (node.star != kNone && !segment.empty()) to.push_back(node.star);
  }
}

void TemplateIndex::Rules(const State& state, std::vector<uint32_t>& out) const {
  const size_t begin = out.size();
  for (uint32_t n : state) out.insert(out.end(), nodes_[n].rules.begin(), nodes_[n].rules.end());
  // Each node's list is increasing; several nodes' lists interleave.
  if (state.size() > 1) std::sort(out.begin() + begin, out.end());
}

TemplateIndex::State TemplateIndex::Walk(State from, std::string_view dotted) const {
  State next;
  for (std::string_view segment : absl::StrSplit(dotted, '.')) {
    Step(from, segment, next);
    std::swap(from, next);
    if (from.empty()) break;
  }
  return from;
}

std::vector<uint32_t> TemplateIndex::Matching(std::string_view fqn) const {
  std::vector<uint32_t> out;
  Rules(Walk(Start(), fqn), out);
  return out;
}

std::vector<uint32_t> TemplateIndex::MatchingParameter(std::string_view module_fqn, std::string_view name) const {
  // At the root the name is the only segment; elsewhere it follows the
  // module's (a name is one segment, even if it held a dot).
  const State module = module_fqn.empty() ? Start() : Walk(Start(), module_fqn);
  State at;
  Step(module, name, at);
  std::vector<uint32_t> out;
  Rules(at, out);
  return out;
}

}  // namespace shardplan

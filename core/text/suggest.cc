#include "core/text/suggest.h"

#include <algorithm>
#include <vector>

namespace shardplan {

size_t EditDistance(std::string_view a, std::string_view b) {
  // d[i][j]: the distance between a's first i bytes and b's first j.
  const size_t width = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * width);
  auto at = [&](size_t i, size_t j) -> size_t& { return d[i * width + j]; };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

NearestName::NearestName(std::string_view word) : word_(word), bound_(std::clamp<size_t>(word.size() / 3, 1, 3)) {}

void NearestName::Consider(std::string_view candidate) {
  // More than the bound apart in length is more than the bound in edits.
  const size_t gap =
      candidate.size() > word_.size() ? candidate.size() - word_.size() : word_.size() - candidate.size();
  if (gap > bound_ || (best_ && gap == bound_)) return;
  const size_t d = EditDistance(word_, candidate);
  if (d > bound_ || (best_ && d == bound_)) return;
  best_ = candidate;
  // A later candidate must be strictly nearer.
  bound_ = d;
}

}  // namespace shardplan

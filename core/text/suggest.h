// Did you mean: the name nearest to a misspelt one among those that exist.
//
//   NearestName near("mlpp");
//   for (std::string_view child : {"self_attn", "mlp"}) near.Consider(child);
//   near.best() == "mlp"
#ifndef SHARDPLAN_CORE_TEXT_SUGGEST_H_
#define SHARDPLAN_CORE_TEXT_SUGGEST_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace shardplan {

// Edits from `a` to `b`: insertions, deletions, substitutions and swaps of
// two neighbouring bytes ("jsno" is one from "json"), each one edit
// (optimal string alignment distance).
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to a word, among those near enough to be what was
// meant: at most a third of the word's length in edits, at least 1, at most
// 3. Ties go to the first candidate considered.
class NearestName {
 public:
  explicit NearestName(std::string_view word);
  void Consider(std::string_view candidate);
  // nullopt when no candidate was near enough. A view of the candidate.
  std::optional<std::string_view> best() const { return best_; }

 private:
  std::string_view word_;
  size_t bound_;  // the largest distance accepted, then the best's
  std::optional<std::string_view> best_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_TEXT_SUGGEST_H_

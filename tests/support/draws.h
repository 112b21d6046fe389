// A fixed stream of pseudo-random draws (an LCG) for randomized tests: the
// same seed gives the same cases on every machine and standard library.
// Called with n, it draws a number in [0, n).
#ifndef SHARDPLAN_TESTS_SUPPORT_DRAWS_H_
#define SHARDPLAN_TESTS_SUPPORT_DRAWS_H_

#include <cstddef>
#include <cstdint>

namespace shardplan {

class Draws {
 public:
  explicit Draws(uint64_t seed) : state_(seed) {}
  size_t operator()(uint64_t n) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((state_ >> 33) % n);
  }

 private:
  uint64_t state_;
};

}  // namespace shardplan

#endif  // SHARDPLAN_TESTS_SUPPORT_DRAWS_H_

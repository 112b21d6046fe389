// The fuzz targets' assertion: a property that fails is a crash, which
// libFuzzer saves as a finding and the replay test reports as a failure.
#ifndef SHARDPLAN_FUZZ_FUZZ_CHECK_H_
#define SHARDPLAN_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, ...)                                            \
  do {                                                                        \
    if (!(condition)) {                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                      \
      std::fprintf(stderr, "\n");                                             \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

#endif  // SHARDPLAN_FUZZ_FUZZ_CHECK_H_

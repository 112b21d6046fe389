// How long a cache line takes to go from one CPU to another and back: two
// threads, pinned to the first two CPUs this process may run on, pass a
// counter to and fro. On a virtual machine this changes with where the
// host puts the vCPUs, and with it the speed of every phase that passes
// data between threads (docs/performance.md). Prints one JSON object:
//   {"cpus": [0, 1], "round_trip_ns": [median of each run, ...]}
// Usage: round_trip [--runs N] [--rounds M]; exits 2 on fewer than two CPUs.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

bool Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Nanoseconds per round trip over `rounds` round trips between CPUs a and b.
double RoundTrip(int a, int b, long rounds) {
  alignas(64) std::atomic<long> ball{0};
  std::thread partner([&] {
    Pin(b);
    for (long i = 0; i < rounds; ++i) {
      while (ball.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      ball.store(2 * i + 2, std::memory_order_release);
    }
  });
  Pin(a);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < rounds; ++i) {
    ball.store(2 * i + 1, std::memory_order_release);
    while (ball.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const auto stop = std::chrono::steady_clock::now();
  partner.join();
  return std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(rounds);
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 5, rounds = 100000;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--runs") == 0 && has_value) {
      runs = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--rounds") == 0 && has_value) {
      rounds = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: round_trip [--runs N] [--rounds M]\n");
      return 1;
    }
  }
  if (runs < 1 || rounds < 1) {
    std::fprintf(stderr, "round_trip: --runs and --rounds must be positive\n");
    return 1;
  }
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    std::perror("round_trip: sched_getaffinity");
    return 1;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (cpus.size() < 2) {
    std::fprintf(stderr, "round_trip: needs two CPUs, this process may use %zu\n", cpus.size());
    return 2;
  }
  std::printf("{\"cpus\": [%d, %d], \"round_trip_ns\": [", cpus[0], cpus[1]);
  for (long r = 0; r < runs; ++r) std::printf("%s%.1f", r ? ", " : "", RoundTrip(cpus[0], cpus[1], rounds));
  std::printf("]}\n");
  return 0;
}

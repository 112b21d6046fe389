// The driver of the checks that have a part each item can do alone and a
// part that must follow the items' order (claims, the plan check): scans in
// parallel, applies in order.
#ifndef SHARDPLAN_CORE_EXEC_SCAN_THEN_APPLY_H_
#define SHARDPLAN_CORE_EXEC_SCAN_THEN_APPLY_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "core/exec/parallel.h"

namespace shardplan {

namespace exec_internal {
// Makes `r` a fresh Result for its next block: r.Clear() where Result has
// one (as fresh, keeping its storage), else a new value.
template <typename R>
auto MakeFresh(R& r, int) -> decltype(r.Clear(), void()) {
  r.Clear();
}
template <typename R>
void MakeFresh(R& r, long) {
  r = R();
}
}  // namespace exec_internal

// Calls scan(begin, end, results) for blocks [begin, end) covering [0, n),
// then apply(i, results[i - begin]) for every i in increasing order with
// what its block's scan left there. scan fills results[i - begin] (fresh:
// cleared where Result has Clear(), else a new value) for each i of its
// block; it runs once per block, so it can set up per-block state once
// (a resolver). Blocks are scanned in parallel and overlap with the applies
// of earlier blocks; only a few blocks' results are live at once.
//
// One thread runs blocks of `block` indexes. With several, there are as
// many blocks as blocks of `block` indexes would make, or at most 128,
// rounded up to a multiple of the threads, and every thread of the arena
// takes the next block, scans it, waits until the block before it is
// applied, and applies it itself: a block's results never leave the CPU
// that found them (a pipeline that applied each block on whichever thread
// was free paid for moving them). Scans and applies run isolated, so a
// thread waiting for its turn runs no other block's task. An exception in
// a scan or an apply stops every thread and is rethrown.
template <typename Result, typename Scan, typename Apply>
void ScanThenApply(size_t n, size_t block, Scan&& scan, Apply&& apply) {
  auto scan_block = [&](size_t begin, size_t end, std::vector<Result>& results) {
    results.resize(end - begin);
    for (Result& r : results) exec_internal::MakeFresh(r, 0);
    scan(begin, end, results.data());
  };
  auto apply_block = [&](size_t begin, size_t end, std::vector<Result>& results) {
    for (size_t i = begin; i < end; ++i) apply(i, results[i - begin]);
  };
#ifndef SHARDPLAN_SERIAL
  const size_t threads = ArenaThreads();
  constexpr size_t kMaxBlocks = 128;
  const size_t at_most = std::max(block, ChunkCount(n, kMaxBlocks));
  if (threads > 1 && n > at_most) {
    const size_t count = ChunkCount(ChunkCount(n, at_most), threads) * threads;
    auto start_of = [&](size_t k) { return k * n / count; };
    alignas(64) std::atomic<size_t> next{0};     // the next block to take
    alignas(64) std::atomic<size_t> applied{0};  // blocks applied, in order
    alignas(64) std::atomic<bool> failed{false};
    auto take_part = [&] {
      std::vector<Result> results;
      try {
        for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
          const size_t begin = start_of(k), end = start_of(k + 1);
          tbb::this_task_arena::isolate([&] { scan_block(begin, end, results); });
          for (int spins = 0; applied.load(std::memory_order_acquire) != k; ++spins) {
            if (failed.load(std::memory_order_relaxed)) return;
            if (spins > 64) std::this_thread::yield();
          }
          tbb::this_task_arena::isolate([&] { apply_block(begin, end, results); });
          applied.store(k + 1, std::memory_order_release);
        }
      } catch (...) {
        failed = true;  // the others stop waiting for blocks that will not come
        throw;
      }
    };
    tbb::parallel_for(tbb::blocked_range<size_t>(0, threads, 1),
                      [&](const tbb::blocked_range<size_t>&) { take_part(); }, tbb::simple_partitioner());
    return;
  }
#endif
  std::vector<Result> results;
  for (size_t begin = 0; begin < n; begin += block) {
    const size_t end = std::min(n, begin + block);
    scan_block(begin, end, results);
    apply_block(begin, end, results);
  }
}

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_EXEC_SCAN_THEN_APPLY_H_

// Data parallelism for the engine's drivers: oneTBB when built with it,
// plain loops when built with --define shardplan_serial=1 (the WebAssembly
// build) and inside WithThreads(1, ...). Results never depend on the
// schedule: bodies write only to their own indexes, and callers merge in
// index order. (ScanThenApply, for checks with an in-order part, is in
// scan_then_apply.h.)
#ifndef SHARDPLAN_CORE_EXEC_PARALLEL_H_
#define SHARDPLAN_CORE_EXEC_PARALLEL_H_

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

#ifndef SHARDPLAN_SERIAL
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/parallel_invoke.h"
#include "oneapi/tbb/parallel_pipeline.h"
#include "oneapi/tbb/parallel_sort.h"
#include "oneapi/tbb/task_arena.h"
#endif

namespace shardplan {

namespace parallel_internal {
// True while WithThreads runs its function on one thread.
inline thread_local bool one_thread = false;
}  // namespace parallel_internal

// Whether the helpers below run plain loops on the calling thread, never
// calling oneTBB: always in the serial build, and inside WithThreads(1, ...)
// otherwise.
inline bool OnOneThread() {
#ifdef SHARDPLAN_SERIAL
  return true;
#else
  return parallel_internal::one_thread;
#endif
}

// The threads the current arena runs (1: OnOneThread).
inline size_t ArenaThreads() {
#ifndef SHARDPLAN_SERIAL
  if (!OnOneThread()) return static_cast<size_t>(tbb::this_task_arena::max_concurrency());
#endif
  return 1;
}

// Runs `fn` with at most `threads` worker threads (0: all cores). More
// threads than cores are not started: they could not run at once, and
// oneTBB would warn about them on stderr. With one thread, `fn` runs on the
// calling thread without oneTBB (OnOneThread), which spares starting its
// scheduler and worker threads.
template <typename Fn>
auto WithThreads(int threads, Fn&& fn) {
#ifdef SHARDPLAN_SERIAL
  (void)threads;
  return fn();
#else
  if (threads == 1) {
    struct OneThreadScope {  // sets what OnOneThread() reads, for fn's call
      bool before = parallel_internal::one_thread;
      OneThreadScope() { parallel_internal::one_thread = true; }
      ~OneThreadScope() { parallel_internal::one_thread = before; }
    } scope;
    return fn();
  }
  const int cores = tbb::info::default_concurrency();
  tbb::task_arena arena(threads > 0 && threads < cores ? threads : cores);
  return arena.execute(std::forward<Fn>(fn));
#endif
}

// Calls body(begin, end) on disjoint chunks covering [0, n), in parallel:
// chunks of grain/2 to grain indexes (all of [0, n) when n <= grain, or
// OnOneThread).
template <typename Body>
void ParallelFor(size_t n, size_t grain, Body&& body) {
  if (OnOneThread() || n <= grain) {
    if (n > 0) body(size_t{0}, n);
    return;
  }
#ifndef SHARDPLAN_SERIAL
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, grain),
                    [&](const tbb::blocked_range<size_t>& r) { body(r.begin(), r.end()); });
#endif
}

// The number of chunks of `grain` indexes that cover n indexes.
constexpr size_t ChunkCount(size_t n, size_t grain) { return (n + grain - 1) / grain; }

// Splits [begin, end) into chunks of `grain` indexes (the last one may be
// shorter) and calls body(c, lo, hi) once for the cth chunk [lo, hi), in
// parallel. A caller that keeps per-chunk results in ChunkCount(end -
// begin, grain) slots can merge them in index order afterwards.
template <typename Body>
void ParallelChunks(size_t begin, size_t end, size_t grain, Body&& body) {
  ParallelFor(ChunkCount(end - begin, grain), 1, [&](size_t first, size_t stop) {
    for (size_t c = first; c < stop; ++c) body(c, begin + c * grain, std::min(end, begin + (c + 1) * grain));
  });
}

// Calls gather(lo, hi, items) once per chunk [lo, hi) of ParallelChunks,
// where gather appends what it finds in its chunk to `items`, a vector of
// the chunk's own. Returns the items of every chunk, joined in index order.
template <typename T, typename Gather>
std::vector<T> ParallelGather(size_t begin, size_t end, size_t grain, Gather&& gather) {
  std::vector<std::vector<T>> chunks(ChunkCount(end - begin, grain));
  ParallelChunks(begin, end, grain, [&](size_t c, size_t lo, size_t hi) { gather(lo, hi, chunks[c]); });
  size_t total = 0;
  for (const std::vector<T>& chunk : chunks) total += chunk.size();
  std::vector<T> out;
  out.reserve(total);
  for (std::vector<T>& chunk : chunks) std::move(chunk.begin(), chunk.end(), std::back_inserter(out));
  return out;
}

// Calls a() and b(), as two tasks that the arena's threads may run at once
// (OnOneThread: a(), then b()); returns when both have.
template <typename A, typename B>
void ParallelInvoke(A&& a, B&& b) {
  if (OnOneThread()) {
    a();
    b();
    return;
  }
#ifndef SHARDPLAN_SERIAL
  tbb::parallel_invoke(a, b);
#endif
}

// std::sort of [begin, end), with the arena's threads.
template <typename Iterator>
void ParallelSort(Iterator begin, Iterator end) {
  if (OnOneThread()) {
    std::sort(begin, end);
    return;
  }
#ifndef SHARDPLAN_SERIAL
  tbb::parallel_sort(begin, end);
#endif
}

// A two-stage pipeline: produce() returns the next item (nullptr at the
// end) and consume(item) uses it. Each stage handles one item at a time, in
// order, but the two overlap on different threads (OnOneThread: each item
// is consumed as soon as it is produced); at most `live` items are in
// flight, so a producer cycling through `live` buffers never reuses one
// still being consumed.
template <typename T, typename Produce, typename Consume>
void Pipeline(size_t live, Produce&& produce, Consume&& consume) {
  if (OnOneThread()) {
    while (T* item = produce()) consume(*item);
    return;
  }
#ifndef SHARDPLAN_SERIAL
  tbb::parallel_pipeline(
      live, tbb::make_filter<void, T*>(tbb::filter_mode::serial_in_order,
                                       [&](tbb::flow_control& control) -> T* {
                                         T* item = produce();
                                         if (item == nullptr) control.stop();
                                         return item;
                                       }) &
                tbb::make_filter<T*, void>(tbb::filter_mode::serial_in_order, [&](T* item) { consume(*item); }));
#else
  (void)live;
#endif
}

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_EXEC_PARALLEL_H_

// Data parallelism for the engine's per-owner and per-path phases: oneTBB
// when built with it, plain loops when built with --define
// shardplan_serial=1 (the WebAssembly build) and inside WithThreads(1, ...).
// Results never depend on the schedule: bodies write only to their own
// indexes, and callers merge in index order.
#ifndef SHARDPLAN_CORE_EXEC_PARALLEL_H_
#define SHARDPLAN_CORE_EXEC_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#ifndef SHARDPLAN_SERIAL
#include <sys/mman.h>

#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/enumerable_thread_specific.h"
#include "oneapi/tbb/info.h"
#include "oneapi/tbb/parallel_for.h"
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

// Asks the kernel for transparent huge pages on the whole 2 MiB pages of
// `bytes` bytes at `data` (madvise; a hint, in the kernel's default
// "madvise" THP mode). Allocators give large blocks their own mapping
// without that hint (mimalloc's huge objects too): on a VM where a
// small-page fault costs 10 us, the hint took the 1M CLI run's faults from
// 18,400 to 13,000 and its 1-thread time down 10-13% (docs/architecture.md).
// Pages are still faulted in only when written.
inline void AdviseHugePages(void* data, size_t bytes) {
#ifdef SHARDPLAN_SERIAL
  (void)data;
  (void)bytes;
#else
  constexpr size_t kHuge = size_t{2} << 20;
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#endif
}

// The threads the current arena runs (1 on one thread: OnOneThread).
inline size_t ArenaThreads() {
#ifndef SHARDPLAN_SERIAL
  if (!OnOneThread()) return static_cast<size_t>(tbb::this_task_arena::max_concurrency());
#endif
  return 1;
}

// Prepares `bytes` bytes of fresh storage at `data` for a fill:
// AdviseHugePages, then, with more than one thread, writes a zero byte to
// every page in parallel, so that the page faults of a large allocation
// are taken on every thread, not by the serial loop that fills it later.
inline void TouchPages(void* data, size_t bytes) {
  AdviseHugePages(data, bytes);
#ifndef SHARDPLAN_SERIAL
  constexpr size_t kPage = 4096;
  char* const base = static_cast<char*>(data);
  if (ArenaThreads() < 2) return;
  ParallelFor((bytes + kPage - 1) / kPage, 256, [&](size_t begin, size_t end) {
    for (size_t page = begin; page < end; ++page) base[page * kPage] = 0;
  });
#endif
}

// Reserves room for n items in `v` (a std::vector) and advises it for huge
// pages (AdviseHugePages), without touching it: for a guessed reservation,
// whose pages past the last item written are never made resident.
template <typename V>
void ReserveAdvised(V& v, size_t n) {
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity() * sizeof(*v.data()));
}

// Reserves room for n items in `v` (a std::vector or std::string) and
// prepares it with TouchPages, for a fill that follows: without it, a tree
// of a million paths filled its arrays one small page at a time.
template <typename V>
void ReserveTouched(V& v, size_t n) {
  v.reserve(n);
  TouchPages(v.data(), v.capacity() * sizeof(*v.data()));
}

// Asks for the cache line at `p` in a state this CPU can write (prefetchw
// on x86-64, where older Intel CPUs run it as a no-op). A scan that
// knows which lines its apply will write (ScanThenApply) fetches them
// while it still works: lines another CPU wrote last (a block the other
// thread applied, an array the calling thread zeroed) each took a round
// trip between the CPUs in the apply, on the in-order path.
inline void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

// The chunks' items in chunk order, in one vector, copied in parallel into
// room reserved once: joining a million items on one thread, the vector
// growing as it went, took longer than finding them. Under 256 KiB they
// are copied on the calling thread: a parallel loop costs a few us to hand
// out, and joining the DeepSeek-V3-sized model's five glob patterns' few
// thousand matches each took 25 us on two CPUs, 5.6 us on one thread.
template <typename T>
std::vector<T> JoinChunks(const std::vector<std::vector<T>>& chunks) {
  std::vector<size_t> offsets(chunks.size() + 1, 0);
  for (size_t c = 0; c < chunks.size(); ++c) offsets[c + 1] = offsets[c] + chunks[c].size();
  std::vector<T> out;
  ReserveTouched(out, offsets.back());
  out.resize(offsets.back());
  const size_t grain = offsets.back() * sizeof(T) < (size_t{256} << 10) ? chunks.size() : 1;
  ParallelFor(chunks.size(), grain, [&](size_t first, size_t stop) {
    for (size_t c = first; c < stop; ++c) std::copy(chunks[c].begin(), chunks[c].end(), out.begin() + offsets[c]);
  });
  return out;
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

// The number of non-zero bytes of `bytes`, counted in parallel chunks.
inline size_t CountNonZero(const std::vector<uint8_t>& bytes) {
  constexpr size_t kGrain = size_t{1} << 16;
  std::vector<size_t> zeros(ChunkCount(bytes.size(), kGrain));
  ParallelChunks(0, bytes.size(), kGrain, [&](size_t c, size_t lo, size_t hi) {
    // 64 bytes at a time, in a loop of fixed length that GCC vectorizes at
    // -O2: std::count's loop was not, and took a cycle a byte (ten times as
    // long, 2026-12-02).
    size_t i = lo, count = 0;
    for (; i + 64 <= hi; i += 64) {
      uint8_t block = 0;
      for (size_t k = 0; k < 64; ++k) block += bytes[i + k] == 0;
      count += block;
    }
    for (; i < hi; ++i) count += bytes[i] == 0;
    zeros[c] = count;
  });
  return bytes.size() - std::accumulate(zeros.begin(), zeros.end(), size_t{0});
}

// Calls gather(lo, hi, items) once per chunk [lo, hi) of ParallelChunks,
// where gather appends what it finds in its chunk to `items`, a vector of
// the chunk's own (state kept from index to index stays within the call).
// Returns the items of every chunk, joined in index order.
template <typename T, typename Gather>
std::vector<T> ParallelGather(size_t begin, size_t end, size_t grain, Gather&& gather) {
  std::vector<std::vector<T>> chunks(ChunkCount(end - begin, grain));
  ParallelChunks(begin, end, grain, [&](size_t c, size_t lo, size_t hi) { gather(lo, hi, chunks[c]); });
  return JoinChunks(chunks);
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

// One lazily built T per worker thread; on one thread (OnOneThread when
// it is made), a single T and no oneTBB storage.
template <typename T>
class PerThread {
 public:
  explicit PerThread(std::function<T()> make) : make_(std::move(make)) {
#ifndef SHARDPLAN_SERIAL
    if (!OnOneThread()) values_.emplace([this] { return make_(); });
#endif
  }
  PerThread(const PerThread&) = delete;  // values_ calls this one's make_
  PerThread& operator=(const PerThread&) = delete;

  T& local() {
#ifndef SHARDPLAN_SERIAL
    if (values_) return values_->local();
#endif
    if (!value_) value_.emplace(make_());
    return *value_;
  }

 private:
  std::function<T()> make_;
#ifndef SHARDPLAN_SERIAL
  std::optional<tbb::enumerable_thread_specific<T>> values_;
#endif
  std::optional<T> value_;
};

// Runs `fn` with at most `threads` worker threads (0: all cores). More
// threads than cores are not started: they could not run at once, and
// oneTBB would print a warning on stderr for them. With one thread, `fn`
// runs on the calling thread without oneTBB (OnOneThread): starting its
// scheduler, worker threads and allocator took 2.5 ms, and its one-thread
// pipeline and tasks 2.5 ms more, of a 55 ms check of the
// DeepSeek-V3-sized document (docs/architecture.md).
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

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_EXEC_PARALLEL_H_

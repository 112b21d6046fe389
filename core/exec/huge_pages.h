// Transparent huge pages for the engine's few large arrays, each filled
// once: the module tree's paths, the owners' entries, the parser's indexes
// of ids.
//
// A large document's run writes about as many bytes as the document has,
// into fresh memory. The CLI's allocator (mimalloc, cli/mimalloc.cc) backs
// its own segments with huge pages but maps each large block on its own, in
// 4 KiB pages, and the kernel then takes one page fault per 4 KiB written:
// on the virtual machines measured a fault costs 1.5 to 10 microseconds,
// and the faults of a 1,000,000-parameter check were a tenth of its time.
// Asking for huge pages on those blocks (madvise, a hint the kernel's
// default "madvise" mode honours) makes it one fault per 2 MiB. Pages are
// still faulted in only when written: room reserved by a guess and never
// used costs address space only.
#ifndef SHARDPLAN_CORE_EXEC_HUGE_PAGES_H_
#define SHARDPLAN_CORE_EXEC_HUGE_PAGES_H_

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace shardplan {

// Asks for huge pages on the whole 2 MiB pages of `bytes` bytes at `data`;
// nothing elsewhere than on Linux.
inline void AdviseHugePages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// v.reserve(n), the room then advised for huge pages (a std::vector or
// std::string).
template <typename V>
void ReserveHuge(V& v, size_t n) {
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity() * sizeof(typename V::value_type));
}

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_EXEC_HUGE_PAGES_H_

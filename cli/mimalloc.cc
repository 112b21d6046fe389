// The CLI's allocator settings (linked as its `malloc`, see cli/BUILD).
//
// mimalloc replaces malloc for the whole process and backs its memory with
// transparent huge pages (it madvises them; "madvise" is the kernel's
// default THP mode on most distributions). A run faults in about as many
// bytes as the document has, and each small-page fault costs 1.5 to 10
// microseconds on the virtual machines measured (docs/performance.md): a
// DeepSeek-V3-sized document takes about 500 faults instead of 8,000, and
// a 1,000,000-parameter one 19,000 instead of 150,000. Every segment is
// committed when it is reserved (eager_commit_delay 0): by default a
// thread's first segment is committed page by page on demand, in small
// pages, and the second thread of a DeepSeek-V3-sized run took 700 faults
// more than the first. MIMALLOC_LARGE_OS_PAGES and
// MIMALLOC_EAGER_COMMIT_DELAY in the environment override these choices.
//
// mimalloc reads its options when it initializes, before the program's
// static constructors run, so the choice is made from the executable's
// .preinit_array: the dynamic loader calls it before initializing any
// library. It allocates nothing; mi_option_set only stores the value.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "mimalloc.h"

namespace {

// Whether the environment sets mimalloc's option `name` (MIMALLOC_<name>=).
bool InEnvironment(char** envp, const char* name) {
  const size_t length = std::strlen(name);
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "MIMALLOC_", 9) == 0 && std::strncmp(*e + 9, name, length) == 0 && (*e)[9 + length] == '=') {
      return true;
    }
  }
  return false;
}

void ChooseOptions(int, char**, char** envp) {
  if (!InEnvironment(envp, "LARGE_OS_PAGES")) mi_option_set(mi_option_large_os_pages, 1);
  if (!InEnvironment(envp, "EAGER_COMMIT_DELAY")) mi_option_set(mi_option_eager_commit_delay, 0);
}

[[gnu::used, gnu::section(".preinit_array")]] void (*const choose_options)(int, char**, char**) = &ChooseOptions;

}  // namespace

// Large blocks in huge pages. mimalloc maps each block larger than its
// segments' room (a document's modules and parameters, the module tree's
// paths, the owners' entries) on its own, in 4 KiB pages, and the kernel
// then takes one fault for each 4 KiB written, several times the faults
// of the same run with these blocks in huge pages (docs/architecture.md,
// "The CLI process"). The executable's `malloc` and `operator new` come before the
// library's, so every allocation of the process passes here; the block is
// mimalloc's, freed by its `free` and `operator delete`. The advice covers
// the block's whole 2 MiB pages, which are still faulted in only when
// written.
namespace {

void* AdviseHugePages(void* block, size_t size) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (block != nullptr && size >= 2 * kHuge) {
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(block) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(block) + size) & ~(kHuge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
  return block;
}

}  // namespace

extern "C" void* malloc(size_t size) { return AdviseHugePages(mi_malloc(size), size); }
void* operator new(size_t size) { return AdviseHugePages(mi_new(size), size); }
void* operator new[](size_t size) { return AdviseHugePages(mi_new(size), size); }

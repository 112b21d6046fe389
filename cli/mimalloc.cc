// The CLI's allocator settings (linked as its `malloc`, see cli/BUILD).
//
// mimalloc replaces malloc for the whole process, and for documents of up
// to 64 MiB it backs its memory with transparent huge pages (it madvises
// them; "madvise" is the kernel's default THP mode on most distributions).
// A DeepSeek-V3-sized document (11 MB) then takes about 800 page faults
// instead of 8,000, which were a fifth of its run. Larger documents keep
// small pages: faulting in hundreds of megabytes of huge pages cost more
// system time than it saved (docs/performance.md). MIMALLOC_LARGE_OS_PAGES
// in the environment overrides the choice either way.
//
// mimalloc reads its options when it initializes, before the program's
// static constructors run, so the choice is made from the executable's
// .preinit_array: the dynamic loader calls it before initializing any
// library. It allocates nothing; mi_option_set only stores the value.
#include <sys/stat.h>

#include <cstdint>
#include <cstring>

#include "mimalloc.h"

namespace {

constexpr uint64_t kMaxHugePageDocumentBytes = uint64_t{64} << 20;

void ChooseLargePages(int argc, char** argv, char** envp) {
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "MIMALLOC_LARGE_OS_PAGES=", 24) == 0) return;  // the user's choice
  }
  // The documents' size: every argument naming a regular file (standard
  // input counts as small).
  uint64_t bytes = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (::stat(argv[i], &st) == 0 && S_ISREG(st.st_mode)) bytes += static_cast<uint64_t>(st.st_size);
  }
  if (bytes <= kMaxHugePageDocumentBytes) mi_option_set(mi_option_large_os_pages, 1);
}

[[gnu::used, gnu::section(".preinit_array")]] void (*const choose_large_pages)(int, char**, char**) =
    &ChooseLargePages;

}  // namespace

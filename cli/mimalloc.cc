// The CLI's allocator settings (linked as its `malloc`, see cli/BUILD).
//
// mimalloc replaces malloc for the whole process and backs its memory with
// transparent huge pages (it madvises them; "madvise" is the kernel's
// default THP mode on most distributions). A run faults in about as many
// bytes as the document has, and each small-page fault costs 1.5 to 10
// microseconds on the virtual machines measured (docs/performance.md): a
// DeepSeek-V3-sized document takes about 800 faults instead of 8,000, and
// a 1,000,000-parameter one 17,000 instead of 150,000.
// MIMALLOC_LARGE_OS_PAGES in the environment overrides the choice.
//
// mimalloc reads its options when it initializes, before the program's
// static constructors run, so the choice is made from the executable's
// .preinit_array: the dynamic loader calls it before initializing any
// library. It allocates nothing; mi_option_set only stores the value.
#include <cstring>

#include "mimalloc.h"

namespace {

void ChooseLargePages(int, char**, char** envp) {
  for (char** e = envp; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, "MIMALLOC_LARGE_OS_PAGES=", 24) == 0) return;  // the user's choice
  }
  mi_option_set(mi_option_large_os_pages, 1);
}

[[gnu::used, gnu::section(".preinit_array")]] void (*const choose_large_pages)(int, char**, char**) =
    &ChooseLargePages;

}  // namespace

// The engine's `new` for WebAssembly: a failed allocation aborts with "OOM",
// as a failed growth of the memory does (-sABORTING_MALLOC=1 in wasm/BUILD),
// so that the wrapper (wasm/js/index.mjs) tells running out of memory from
// other aborts. Without it, libc++'s `new` (built without exceptions) calls a
// plain abort() when malloc returns NULL, which malloc does, without trying to
// grow the memory, for a single request of 2 GiB or more: a vector that
// doubles past 1 GiB.
//
// Replaces the throwing operator new, plain and over-aligned; libc++'s array
// and nothrow forms call these, and its operator delete (free) matches them.

#include <emscripten/em_asm.h>
#include <stdlib.h>

#include <cstddef>
#include <new>

namespace {

[[noreturn]] void OutOfMemory() {
  EM_ASM({ abort('OOM'); });  // emscripten's abort(): throws, never returns
  __builtin_unreachable();
}

}  // namespace

void* operator new(std::size_t size) {
  void* p = malloc(size == 0 ? 1 : size);
  if (p == nullptr) OutOfMemory();
  return p;
}

void* operator new(std::size_t size, std::align_val_t alignment) {
  std::size_t align = static_cast<std::size_t>(alignment);
  if (align < sizeof(void*)) align = sizeof(void*);
  void* p = nullptr;
  if (posix_memalign(&p, align, size == 0 ? 1 : size) != 0) OutOfMemory();
  return p;
}

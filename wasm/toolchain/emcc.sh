#!/bin/bash
# Debian's emcc, as the wasm toolchain's compiler and linker. Debian's
# emscripten needs NODE_PATH to find acorn; its cache is prebuilt and frozen,
# so EM_CACHE is left alone.
export NODE_PATH=/usr/share/nodejs
exec /usr/bin/emcc "$@"

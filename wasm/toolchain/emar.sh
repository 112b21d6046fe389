#!/bin/bash
# Debian's emar, as the wasm toolchain's archiver.
export NODE_PATH=/usr/share/nodejs
exec /usr/bin/emar "$@"

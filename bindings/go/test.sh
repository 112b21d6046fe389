#!/bin/sh
# Vets and tests the Go binding, offline. Extra arguments go to `go test`
# (e.g. -race, -v, -run Conformance).
#
# In a checkout (../../capi/include exists) it builds with the tag
# shardplan_checkout (cgo_checkout.go): the checkout's header, and the library
# from $SHARDPLAN_LIB_DIR when set (the directory holding libshardplan.so,
# passed as CGO_LDFLAGS -L and -rpath), else from <repo root>/bazel-bin/capi.
# Anywhere else (a copy of this directory) it builds as plain `go test` does:
# header and library through `pkg-config shardplan` (cgo_pkgconfig.go), with
# $SHARDPLAN_LIB_DIR, when set, still added to CGO_LDFLAGS.
set -eu
cd "$(dirname "$0")"
tags=""
if [ -f ../../capi/include/shardplan/shardplan.h ]; then
  tags="-tags=shardplan_checkout"
fi
if [ -n "${SHARDPLAN_LIB_DIR:-}" ]; then
  # Quoted so that a directory with spaces survives cgo's flag splitting.
  CGO_LDFLAGS="'-L$SHARDPLAN_LIB_DIR' '-Wl,-rpath,$SHARDPLAN_LIB_DIR'${CGO_LDFLAGS:+ $CGO_LDFLAGS}"
  export CGO_LDFLAGS
fi
export GOPROXY=off GOFLAGS="${GOFLAGS:-}" CGO_ENABLED=1
# shellcheck disable=SC2086 # $tags is one word or none
go vet $tags ./...
# shellcheck disable=SC2086
go test $tags -count=1 "$@" ./...

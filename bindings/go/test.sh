#!/bin/sh
# Vets and tests the Go binding, offline. The library is taken from
# $SHARDPLAN_LIB_DIR when set (the directory holding libshardplan.so), else
# from <repo root>/bazel-bin/capi (the #cgo default). Extra arguments go to
# `go test` (e.g. -race, -v, -run Conformance).
set -eu
cd "$(dirname "$0")"
if [ -n "${SHARDPLAN_LIB_DIR:-}" ]; then
  # Quoted so that a directory with spaces survives cgo's flag splitting.
  CGO_LDFLAGS="'-L$SHARDPLAN_LIB_DIR' '-Wl,-rpath,$SHARDPLAN_LIB_DIR'${CGO_LDFLAGS:+ $CGO_LDFLAGS}"
  export CGO_LDFLAGS
fi
export GOPROXY=off GOFLAGS="${GOFLAGS:-}" CGO_ENABLED=1
go vet ./...
go test -count=1 "$@" ./...

//go:build shardplan_checkout

package shardplan

// With the build tag shardplan_checkout (test.sh passes it in a checkout):
// the checkout's header and its Bazel build of the shared library,
// <repo root>/bazel-bin/capi (bazel build //capi:libshardplan.so), resolved
// from this package's directory, both for linking and, as a RUNPATH, for
// loading. CGO_LDFLAGS=-LDIR -Wl,-rpath,DIR comes first and so wins (test.sh
// turns SHARDPLAN_LIB_DIR into that). See README.md.

/*
#cgo CFLAGS: -I${SRCDIR}/../../capi/include
#cgo LDFLAGS: -L${SRCDIR}/../../bazel-bin/capi -Wl,-rpath,${SRCDIR}/../../bazel-bin/capi -lshardplan
*/
import "C"

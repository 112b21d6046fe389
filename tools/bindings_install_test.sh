#!/usr/bin/env bash
# The Rust, Go and Julia side of issue 41's tests, run by tools/test.sh as the
# `bindings-installed` suite: tools/install.sh into a temporary prefix P, then
# copies of bindings/rust, bindings/go and bindings/julia, with the test data
# they read at ../../tests and ../../examples, in a directory outside the
# checkout (no capi/, no bazel-bin: the checkout's header and Bazel output are
# out of their view), built and run against P only:
#  1. Rust: `cargo test --offline` with PKG_CONFIG_PATH=P/lib/pkgconfig as the
#     one variable (pkg-config looks in /usr/local by itself, so after a plain
#     `tools/install.sh` none is needed): linked statically, no NEEDED
#     libshardplan and no rpath in the test binaries; the example `check` on
#     the two tiny-llama documents; `cargo test --offline --features dynamic`:
#     NEEDED libshardplan.so.1 and an rpath to P/lib; SHARDPLAN_LIB_DIR=P/lib
#     without pkg-config: static again;
#  2. Go: `go vet ./...` and `go test ./...` (#cgo pkg-config: shardplan) with
#     PKG_CONFIG_PATH, and LD_LIBRARY_PATH=P/lib at run time (a .pc gives no
#     rpath; after a system install ldconfig finds libshardplan.so.1); the
#     example program examples/check, and a module of its own that requires
#     the package through a `replace` directive, as a user's program would;
#  3. Julia: its ccall checker against the installed header; the package's
#     tests under Julia when `julia` is on PATH, else (Julia is not installed
#     here) the load it does, dlopen of the soname libshardplan.so.1 with
#     LD_LIBRARY_PATH=P/lib, made through Python's ctypes;
#  4. `tools/install.sh --uninstall`: the static Rust example still runs.
# Exit status 0 when all hold. Needs cargo, go, gcc, pkg-config, python3.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
header="${root}/capi/include/shardplan/shardplan.h"
num() { sed -nE "s/^#define $1 ([0-9]+)\$/\\1/p" "$header"; }
release="$(num SP_VERSION_MAJOR).$(num SP_VERSION_MINOR).$(num SP_VERSION_PATCH)"
abi="$(num SP_ABI_VERSION)"

work="$(mktemp -d /tmp/shardplan-bindings-install.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="${work}/prefix"
tree="${work}/tree"
fail() { echo "bindings_install_test: FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

step "tools/install.sh --prefix ${prefix}"
bash "${root}/tools/install.sh" --prefix "$prefix" --no-ldconfig

step "a tree outside the checkout: ${tree}"
mkdir -p "${tree}/bindings/rust" "${tree}/tests/golden" "${tree}/examples"
# bindings/rust without its target directory (built artifacts of the checkout).
(cd "${root}/bindings/rust" && tar --exclude=./target -cf - .) | tar -xf - -C "${tree}/bindings/rust"
cp -r "${root}/bindings/go" "${root}/bindings/julia" "${tree}/bindings/"
cp -r "${root}/tests/conformance" "${tree}/tests/"
cp -r "${root}/tests/golden/cases" "${tree}/tests/golden/"
cp "${root}"/examples/*.json "${tree}/examples/"
for hidden in bazel-bin capi; do
  [[ ! -e "${tree}/${hidden}" ]] || fail "${tree}/${hidden} exists"
done
(cd "$tree" && find . -maxdepth 2 | sort | tr '\n' ' ')
echo

# Only P and the system: none of the bindings' overrides, no other prefix.
unset SHARDPLAN_LIB_DIR SHARDPLAN_LIBRARY SHARDPLAN_LINK LD_LIBRARY_PATH \
  PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR PKG_CONFIG \
  CGO_CFLAGS CGO_LDFLAGS CARGO_TARGET_DIR RUSTFLAGS CARGO_BUILD_RUSTFLAGS
export PKG_CONFIG_PATH="${prefix}/lib/pkgconfig"
export GOPROXY=off GOFLAGS="" CGO_ENABLED=1
echo "PKG_CONFIG_PATH=${PKG_CONFIG_PATH}: shardplan $(pkg-config --modversion shardplan)," \
  "$(pkg-config --static --libs --cflags shardplan)"

# The build script's linker lines of the newest build in a target directory.
build_output() {
  # shellcheck disable=SC2012 # cargo's hashed directory names are plain
  ls -t "$1"/debug/build/shardplan-*/output | head -n 1
}
# check_example BINARY: the example's output on the two documents.
check_rust_example() {
  local out rc=0
  out="$("$1" ../../examples/tiny-llama-broken.json)" || rc=$?
  echo "$out" | head -n 3
  [[ $rc -eq 1 ]] || fail "$1 on tiny-llama-broken.json: exit ${rc}, not 1"
  [[ "$(head -n 1 <<<"$out")" == "../../examples/tiny-llama-broken.json: ok=false diagnostics=4 groups=4" ]] ||
    fail "$1: first line"
  [[ "$(grep -c '^  error\[' <<<"$out")" -eq 4 ]] || fail "$1: not 4 errors"
  out="$("$1" ../../examples/tiny-llama.json)" || fail "$1 on tiny-llama.json failed"
  [[ "$out" == "../../examples/tiny-llama.json: ok=true diagnostics=0 groups=0" ]] || fail "$1: ${out}"
}

# --- Rust -------------------------------------------------------------------
cd "${tree}/bindings/rust"
step "rust: cargo test --offline (static, through pkg-config)"
# run_cargo LOG ARGS...: cargo ARGS, its output in LOG; prints the summary lines.
run_cargo() {
  local log="$1"
  shift
  if ! cargo "$@" >"$log" 2>&1; then
    tail -n 60 "$log"
    fail "cargo $*"
  fi
  grep -E '^(test result|warning|error)' "$log" || true
}
run_cargo "${work}/cargo.log" test --offline
[[ "$(grep -c '^test result: ok' "${work}/cargo.log")" -ge 8 ]] || fail "fewer than 8 test binaries passed"
out="$(build_output target)"
grep -v rerun "$out"
grep -qx "cargo:lib_dir=${prefix}/lib" "$out" || fail "build.rs did not take ${prefix}/lib"
grep -qx 'cargo:rustc-link-lib=static=shardplan' "$out" || fail "not linked statically"
for t in target/debug/deps/conformance-* target/debug/examples/check; do
  [[ -x "$t" && -f "$t" ]] || continue
  if readelf -d "$t" | grep -E 'NEEDED.*libshardplan|RPATH|RUNPATH'; then
    fail "${t} needs libshardplan.so or has an rpath"
  fi
done
echo "test binaries and example: no NEEDED libshardplan, no rpath"

step "rust: the example check (built by cargo test)"
check_rust_example target/debug/examples/check
cp target/debug/examples/check "${work}/check-rust-static"

step "rust: cargo test --offline --features dynamic"
CARGO_TARGET_DIR="${work}/target-dynamic" run_cargo "${work}/cargo-dynamic.log" test --offline --features dynamic
[[ "$(grep -c '^test result: ok' "${work}/cargo-dynamic.log")" -ge 8 ]] || fail "dynamic: fewer than 8 test binaries passed"
readelf -d "${work}/target-dynamic/debug/examples/check" | grep -E 'NEEDED.*libshardplan|RUNPATH|RPATH'
readelf -d "${work}/target-dynamic/debug/examples/check" | grep -q "NEEDED.*\[libshardplan.so.${abi}\]" ||
  fail "dynamic: no NEEDED libshardplan.so.${abi}"
ldd "${work}/target-dynamic/debug/examples/check" | grep -q "libshardplan.so.${abi} => ${prefix}/lib/" ||
  fail "dynamic: does not load ${prefix}/lib/libshardplan.so.${abi}"
check_rust_example "${work}/target-dynamic/debug/examples/check"

step "rust: SHARDPLAN_LIB_DIR=${prefix}/lib, no pkg-config search path"
SHARDPLAN_LIB_DIR="${prefix}/lib" PKG_CONFIG_LIBDIR="" PKG_CONFIG_PATH="" \
  CARGO_TARGET_DIR="${work}/target-libdir" cargo build --offline --example check
out="$(build_output "${work}/target-libdir")"
grep -qx 'cargo:rustc-link-lib=static=shardplan' "$out" || fail "SHARDPLAN_LIB_DIR: not static"
grep -qx 'cargo:rustc-link-lib=dylib=tbb' "$out" || fail "SHARDPLAN_LIB_DIR: no -ltbb from the .pc"
check_rust_example "${work}/target-libdir/debug/examples/check"

# --- Go ---------------------------------------------------------------------
cd "${tree}/bindings/go"
step "go: go vet ./... && go test ./... (#cgo pkg-config: shardplan)"
go vet ./...
LD_LIBRARY_PATH="${prefix}/lib" go test -count=1 ./...
step "go: the example program examples/check"
go build -o "${work}/check-go" ./examples/check
readelf -d "${work}/check-go" | grep -E 'NEEDED.*libshardplan|RUNPATH|RPATH' || true
readelf -d "${work}/check-go" | grep -q "NEEDED.*\[libshardplan.so.${abi}\]" || fail "go: no NEEDED libshardplan.so.${abi}"
rc=0
out="$(LD_LIBRARY_PATH="${prefix}/lib" "${work}/check-go" ../../examples/tiny-llama-broken.json)" || rc=$?
echo "$out" | head -n 3
[[ $rc -eq 1 ]] || fail "go example: exit ${rc}, not 1"
[[ "$(head -n 1 <<<"$out")" == "shardplan ${release} ok: false" ]] || fail "go example: first line"
[[ "$(grep -c '^error\[' <<<"$out")" -eq 4 ]] || fail "go example: not 4 errors"
out="$(LD_LIBRARY_PATH="${prefix}/lib" "${work}/check-go" ../../examples/tiny-llama.json)" || fail "go example on tiny-llama.json"
[[ "$out" == "shardplan ${release} ok: true" ]] || fail "go example: ${out}"

step "go: a module of its own using the package (replace directive)"
mkdir -p "${tree}/consumer"
cat >"${tree}/consumer/go.mod" <<'EOF'
module example.com/consumer

go 1.19

require github.com/shardplan/shardplan/bindings/go v0.0.0

replace github.com/shardplan/shardplan/bindings/go => ../bindings/go
EOF
cat >"${tree}/consumer/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"

	shardplan "github.com/shardplan/shardplan/bindings/go"
)

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	doc, err := shardplan.Parse(data, nil)
	if err != nil {
		panic(err)
	}
	defer doc.Close()
	res, err := doc.Check(nil)
	if err != nil {
		panic(err)
	}
	defer res.Close()
	fmt.Printf("libshardplan %s (ABI %d): ok=%v diagnostics=%d\n", shardplan.Version(), shardplan.ABIVersion(), res.OK(), res.Len())
}
EOF
(cd "${tree}/consumer" && go build -o "${work}/consumer" .)
out="$(cd "$tree" && LD_LIBRARY_PATH="${prefix}/lib" "${work}/consumer" examples/tiny-llama-broken.json)"
echo "$out"
[[ "$out" == "libshardplan ${release} (ABI ${abi}): ok=false diagnostics=4" ]] || fail "consumer: ${out}"

# --- Julia ------------------------------------------------------------------
cd "${tree}/bindings/julia"
step "julia: the ccall checker against the installed header"
python3 test/check_ccalls.py --header "${prefix}/include/shardplan/shardplan.h" src/ShardPlan.jl
if command -v julia >/dev/null; then
  step "julia: test/runtests.jl (the library: the soname, through LD_LIBRARY_PATH)"
  LD_LIBRARY_PATH="${prefix}/lib" julia --project=. test/runtests.jl
else
  step "julia: not installed, so test/runtests.jl is not run; its load, dlopen(\"libshardplan.so.${abi}\"), through ctypes"
  soname="$(sed -nE 's/^const SONAME = "(.*)"$/\1/p' src/ShardPlan.jl)"
  [[ "$soname" == "libshardplan.so.${abi}" ]] || fail "ShardPlan.jl's SONAME is '${soname}'"
  LD_LIBRARY_PATH="${prefix}/lib" python3 - "$soname" "${prefix}/lib" "$release" "$abi" <<'EOF'
import ctypes, os, sys
soname, libdir, release, abi = sys.argv[1:]
lib = ctypes.CDLL(soname)  # dlopen by the bare name: the dynamic linker's search, as Libdl.dlopen
lib.sp_abi_version.restype = ctypes.c_uint32
lib.sp_version_string.restype = ctypes.c_char_p
loaded = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libshardplan" in line})
print("dlopen(%r): %s, ABI %d, release %s" % (soname, loaded, lib.sp_abi_version(),
                                                lib.sp_version_string().decode()))
assert loaded == [os.path.join(libdir, "libshardplan.so." + release)], loaded
assert lib.sp_abi_version() == int(abi) and lib.sp_version_string().decode() == release
EOF
fi

# --- After uninstalling -----------------------------------------------------
step "tools/install.sh --prefix ${prefix} --uninstall; the static Rust example still runs"
bash "${root}/tools/install.sh" --prefix "$prefix" --uninstall
[[ ! -e "${prefix}/lib/libshardplan.so.${abi}" ]] || fail "still installed"
cd "${tree}/bindings/rust"
check_rust_example "${work}/check-rust-static"
echo "bindings_install_test: all checks passed"

#!/usr/bin/env bash
# Installs what is missing, then runs every test: `bazel test //...` plain
# (-c opt: the build that the install, wheel and package suites ship and
# that the bindings' suites load, so that it is built once), under
# AddressSanitizer and UndefinedBehaviorSanitizer together
# (--config=sanitize), and with the serial (no oneTBB) engine that the
# WebAssembly build uses; the parallel phases' tests under ThreadSanitizer
# (with oneTBB built from its source, so that TSan sees its scheduler's
# synchronization); each fuzz target as a fuzzer for 30 seconds
# (tools/fuzz.sh); then, against the plain libshardplan.so, the Rust, Go and
# Python bindings' own test runners (the Python one with the PyTorch
# exporter), the model zoo, the Python wheel in fresh virtual environments
# (tools/wheel_test.sh), the WebAssembly module and page (Node and
# Chromium), the measurement scripts (tools/perf/tests) and the downstream
# Bazel workspace (examples/downstream); then tools/install.sh into a
# temporary prefix with a C program built through pkg-config against it
# (tools/install_test.sh) and the Rust, Go and Julia bindings against it
# (tools/bindings_install_test.sh), and the Debian package installed into an
# empty root (tools/package_deb_test.sh). Prints each runner's summary with
# the seconds it took, and closing "bazel: N passed, N failed" and
# "suites: N passed, N failed" lines.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh || exit 2
echo "=== setup: ${SECONDS} s"

passed=0 failed=0 status=0
# The tests of the parallel phases: one result on 1 to 8 threads, the
# helpers, the engine, the document reader's pipeline, the C ABI from
# several threads.
tsan_targets=(//tests/core:threads_test //tests/core:parallel_test //tests/core:engine_test
  //tests/core:json_reader_test //capi:capi_test)
for config in plain sanitize serial tsan; do
  targets=(//...)
  case "$config" in
    plain) flags=(-c opt) ;;
    serial) flags=(--define=shardplan_serial=1) ;;
    tsan)
      flags=(--config=tsan "--override_repository=onetbb=${root}/third_party/onetbb/src")
      targets=("${tsan_targets[@]}")
      ;;
    *) flags=("--config=$config") ;;
  esac
  echo "=== bazel test ${flags[*]} ${targets[*]} (${config})"
  log="$(mktemp)" start=$SECONDS
  bazel test "${flags[@]}" "${targets[@]}" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  p=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
  f=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' "$log")
  rm -f "$log"
  echo "=== ${config}: ${p} test targets passed, ${f} failed (bazel exit ${rc}; $((SECONDS - start)) s)"
  passed=$((passed + p))
  failed=$((failed + f))
  if [[ $rc -ne 0 ]]; then
    status=1
    [[ $f -eq 0 ]] && failed=$((failed + 1))  # a build failure counts as a failure
  fi
done
echo "bazel: ${passed} passed, ${failed} failed"

# --- Outside Bazel: bindings and a downstream repository --------------------
# They load or link the plain (-c opt) build of the C ABI (the sanitizer
# builds need their runtimes preloaded).
suites_passed=0 suites_failed=0
suite() {  # suite NAME COMMAND...
  local name="$1" start=$SECONDS
  shift
  echo "=== ${name}: $*"
  if "$@"; then
    echo "=== ${name}: passed ($((SECONDS - start)) s)"
    suites_passed=$((suites_passed + 1))
  else
    echo "=== ${name}: FAILED ($((SECONDS - start)) s)"
    suites_failed=$((suites_failed + 1))
    status=1
  fi
}
lib_dir=""
if bazel build -c opt //capi:libshardplan.so; then
  lib_dir="$(bazel info -c opt bazel-bin 2>/dev/null)/capi"
fi
# The Rust crate as from a checkout, with no variable: build.rs links the
# static bazel-bin/capi/libshardplan.a (PKG_CONFIG_LIBDIR empty, so that an
# installed shardplan.pc, which pkg-config would find first, is not used).
rust_checkout() {
  bazel build -c opt //capi:libshardplan.a || return 1
  env -u SHARDPLAN_LIB_DIR -u SHARDPLAN_LINK -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="" \
    cargo test --offline --manifest-path bindings/rust/Cargo.toml
}
if [[ -f "${lib_dir}/libshardplan.so" ]]; then
  suite rust rust_checkout
  suite go env SHARDPLAN_LIB_DIR="${lib_dir}" sh bindings/go/test.sh
  suite python env SHARDPLAN_LIBRARY="${lib_dir}/libshardplan.so" SHARDPLAN_CLI="${lib_dir%/capi}/cli/shardplan" \
    /usr/bin/python3 -m pytest -q bindings/python/tests
  suite zoo env SHARDPLAN_LIBRARY="${lib_dir}/libshardplan.so" SHARDPLAN_CLI="${lib_dir%/capi}/cli/shardplan" \
    /usr/bin/python3 -m pytest -q examples/zoo/test_zoo.py
else
  echo "=== bindings: libshardplan.so did not build"
  suites_failed=$((suites_failed + 1))
  status=1
fi
# The Python wheel as a user gets it: `pip wheel ./bindings/python` (the library
# built with -c opt and shipped inside), installed into fresh virtual
# environments and run from outside the checkout with no SHARDPLAN_*
# variable; `python -m shardplan` against the CLI.
suite wheel bash tools/wheel_test.sh
# The WebAssembly module, its npm package and the page: every conformance case
# through wasm against the native CLI, the export lists, the page in Chromium.
wasm() {
  local cli npm site
  cli="$(bazel info -c opt bazel-bin 2>/dev/null)/cli/shardplan"
  bazel build -c opt //cli:shardplan || return 1
  bazel build --config=wasm //wasm:npm //wasm:site || return 1
  npm="$(bazel info --config=wasm bazel-bin 2>/dev/null)/wasm/npm"
  site="${npm%/npm}/site"
  mkdir -p "${root}/wasm/test/outputs"
  SHARDPLAN_CLI="${cli}" SHARDPLAN_LIBRARY="${lib_dir}/libshardplan.so" \
    SHARDPLAN_WASM_NPM="${npm}" SHARDPLAN_SITE="${site}" \
    SHARDPLAN_TEST_OUTPUTS="${root}/wasm/test/outputs" \
    node --test wasm/test/*.test.mjs
}
suite wasm wasm
# The measurement scripts' own tests, on the fastbuild benchmark: they count
# instructions inside lambdas that -c opt inlines away.
perf_tools() {
  bazel build //core:stages_benchmark || return 1
  SHARDPLAN_BENCH="$(bazel info bazel-bin 2>/dev/null)/core/stages_benchmark" \
    /usr/bin/python3 -m pytest -q tools/perf/tests
}
suite perf-tools perf_tools
# Every fuzz target as a fuzzer (clang, ASan + UBSan), 30 seconds each.
suite fuzz bash tools/fuzz.sh --time 30
downstream() {
  local rc
  (cd examples/downstream && bazel test //...)
  rc=$?
  (cd examples/downstream && bazel shutdown)  # one Bazel server at a time
  return "$rc"
}
suite downstream downstream
# tools/install.sh into a temporary prefix, then a C program built with
# pkg-config against it (shared and static) from outside the checkout.
suite install bash tools/install_test.sh
# The Rust, Go and Julia bindings against tools/install.sh's temporary prefix
# only, copied outside the checkout: cargo test (static, and the dynamic
# feature) and go test through pkg-config, their example programs, the Julia
# package's soname lookup.
suite bindings-installed bash tools/bindings_install_test.sh
# tools/package-deb.sh, its Depends, and its CLI and library installed with
# dpkg --root into an empty root.
suite deb bash tools/package_deb_test.sh
echo "bazel: ${passed} passed, ${failed} failed"
echo "suites: ${suites_passed} passed, ${suites_failed} failed"
echo "took ${SECONDS} s"
exit "$status"

#!/usr/bin/env bash
# Installs what is missing, then runs every test: `bazel test //...` plain,
# under AddressSanitizer, under UndefinedBehaviorSanitizer, and with the
# serial (no oneTBB) engine that the WebAssembly build uses. Prints Bazel's
# summaries and a closing "N passed, N failed" line over all configurations.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh || exit 2

passed=0 failed=0 status=0
for config in plain asan ubsan serial; do
  case "$config" in
    plain) flags=() ;;
    serial) flags=(--define=shardplan_serial=1) ;;
    *) flags=("--config=$config") ;;
  esac
  echo "=== bazel test ${flags[*]} //... (${config})"
  log="$(mktemp)"
  bazel test "${flags[@]}" //... 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  p=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
  f=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' "$log")
  rm -f "$log"
  echo "=== ${config}: ${p} test targets passed, ${f} failed (bazel exit ${rc})"
  passed=$((passed + p))
  failed=$((failed + f))
  if [[ $rc -ne 0 ]]; then
    status=1
    [[ $f -eq 0 ]] && failed=$((failed + 1))  # a build failure counts as a failure
  fi
done
echo "bazel: ${passed} passed, ${failed} failed"
exit "$status"

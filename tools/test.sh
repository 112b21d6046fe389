#!/usr/bin/env bash
# Installs what is missing, then runs every test: `bazel test //...` plain,
# under AddressSanitizer and under UndefinedBehaviorSanitizer. Prints Bazel's
# summaries and a closing "N passed, N failed" line over all configurations.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh || exit 2

passed=0 failed=0 status=0
for config in "" asan ubsan; do
  name="${config:-plain}"
  echo "=== bazel test //... (${name})"
  log="$(mktemp)"
  bazel test ${config:+--config=$config} //... 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  p=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
  f=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' "$log")
  rm -f "$log"
  echo "=== ${name}: ${p} test targets passed, ${f} failed (bazel exit ${rc})"
  passed=$((passed + p))
  failed=$((failed + f))
  if [[ $rc -ne 0 ]]; then
    status=1
    [[ $f -eq 0 ]] && failed=$((failed + 1))  # a build failure counts as a failure
  fi
done
echo "bazel: ${passed} passed, ${failed} failed"
exit "$status"

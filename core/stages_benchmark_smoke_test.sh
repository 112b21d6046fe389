#!/bin/bash
# Smoke test of //core:stages_benchmark: runs every BM_ function once, on the
# smallest generic model only, and fails if the binary fails, a benchmark
# reports an error (state.SkipWithError), or a BM_ function did not run.
set -u

BENCH="$1"
OUT="${TEST_TMPDIR:-$(mktemp -d)}/smoke.txt"

# Google Benchmark 1.7.1: --benchmark_min_time takes seconds as a number.
"$BENCH" --benchmark_filter='/generic/params:1000/' --benchmark_min_time=0.001 \
  --benchmark_color=false >"$OUT" 2>&1
status=$?
cat "$OUT"

fail=0
if [ "$status" -ne 0 ]; then
  echo "FAIL: stages_benchmark exited with status $status"
  fail=1
fi
if grep -q "ERROR OCCURRED" "$OUT"; then
  echo "FAIL: a benchmark reported an error"
  fail=1
fi
for name in BM_Parse BM_BuildTree BM_Collect BM_Nesting BM_OwnerChecks BM_Claims BM_PlanCheck BM_EndToEnd; do
  if ! grep -q "^$name/generic/params:1000/devices:64" "$OUT"; then
    echo "FAIL: $name did not run"
    fail=1
  fi
done
# Exactly the 1k variants, so the filter still selects what it should.
count=$(grep -c "^BM_" "$OUT")
if [ "$count" -ne 8 ]; then
  echo "FAIL: expected 8 benchmarks, got $count"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"

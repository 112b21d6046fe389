#!/usr/bin/env bash
# The downstream binary, built from @shardplan, checks both bundled examples.
set -uo pipefail
check="$1" good="$2" broken="$3"
out="$("$check" "$good")" || { echo "expected $good to pass: $out"; exit 1; }
[[ "$out" == *": ok" ]] || { echo "unexpected output: $out"; exit 1; }
out="$("$check" "$broken")"
rc=$?
[[ $rc -eq 1 ]] || { echo "expected exit 1 for $broken, got $rc: $out"; exit 1; }
for code in native-no-match ports-mismatch unknown-axis shared-conflict; do
  [[ "$out" == *"error[$code]"* ]] || { echo "missing $code in: $out"; exit 1; }
done
[[ "$out" == *": 4 errors" ]] || { echo "unexpected summary: $out"; exit 1; }
echo "downstream check: ok"

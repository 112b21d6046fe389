#!/bin/bash
# //bench:round_trip prints three positive round trips as JSON on two CPUs,
# says why on one, and rejects bad flags.
set -u
BIN="$1"
fail=0
if [ "$(nproc)" -ge 2 ]; then
  out=$("$BIN" --runs 3 --rounds 1000) || { echo "FAIL: exit status $?"; fail=1; }
  echo "$out"
  python3 - "$out" <<'PY' || fail=1
import json, sys
d = json.loads(sys.argv[1])
assert len(d["cpus"]) == 2 and d["cpus"][0] != d["cpus"][1], d
assert len(d["round_trip_ns"]) == 3 and all(t > 0 for t in d["round_trip_ns"]), d
PY
fi
err=$(taskset -c 0 "$BIN" --runs 1 --rounds 10 2>&1 >/dev/null)
[ $? -eq 2 ] && [[ "$err" == *"needs two CPUs"* ]] || { echo "FAIL: one CPU: $err"; fail=1; }
"$BIN" --runs 0 2>/dev/null && { echo "FAIL: --runs 0 accepted"; fail=1; }
"$BIN" --bogus 2>/dev/null && { echo "FAIL: --bogus accepted"; fail=1; }
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"

#!/usr/bin/env bash
# Every fast path of the engine gives byte-identical results to the plain
# code it stands in for (core/fast_paths.h), checked and planned on one and
# two threads: on every conformance and golden case, and on 1,200 random
# documents of the differential tests' generators (tools/reference), seeded.
set -eu
compare="$1"
docs="${TEST_TMPDIR:-$(mktemp -d)}/fast-paths"
mkdir -p "$docs/ownership" "$docs/plan"
python3 tools/reference/gen_documents.py --seed 20261205 --count 800 --out "$docs/ownership" >/dev/null
python3 tools/reference/gen_plan_documents.py --seed 20261206 --count 400 --out "$docs/plan" >/dev/null
exec "$compare" --at-least 1400 tests/conformance/cases tests/golden/cases "$docs/ownership" "$docs/plan"

#!/usr/bin/env bash
# bazel test //bindings/julia:ccall_test
#
# Usage: ccall_test.sh HEADER CHECKER SELF_TESTS JULIA_SOURCE...
# (from the repository root, the same arguments as under Bazel:
#  bindings/julia/test/ccall_test.sh capi/include/shardplan/shardplan.h \
#    bindings/julia/test/check_ccalls.py bindings/julia/test/test_check_ccalls.py \
#    bindings/julia/src/ShardPlan.jl)
#
# 1. The Julia sources' ccalls, mirror structs and enums match the header.
# 2. The checker's self-tests: the real sources pass and mutated copies are reported.
set -euo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: $0 HEADER CHECKER SELF_TESTS JULIA_SOURCE..." >&2
  exit 2
fi
header="$1" checker="$2" selftests="$3"
shift 3
python="${PYTHON:-python3}"
export PYTHONDONTWRITEBYTECODE=1

"$python" "$checker" --header "$header" "$@"

sources="$(IFS=:; echo "$*")"
SHARDPLAN_HEADER="$header" SHARDPLAN_JULIA_SOURCES="$sources" "$python" "$selftests"

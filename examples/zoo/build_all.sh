#!/usr/bin/env bash
# Builds every document of the model zoo into examples/zoo/out/ (git-ignored):
# <model>.json, a plan that passes, <model>-broken.json, the same model with
# a typical mistake, and <model>-<setup>.json, the training setups of the
# scripts that have some (README.md, "Training setups"). One line per document:
# its size, module and parameter counts, and the time taken to build the model
# on the meta device and export it. Extra arguments go to every script (--plan
# also plans each document with the library and prints a one-line summary;
# --only good|broken|training).
#
#   examples/zoo/build_all.sh
#   bazel-bin/cli/shardplan plan examples/zoo/out/llama3-8b.json
#
# Needs Debian's python3-torch (/usr/bin/python3) and the C library the Python
# binding loads on import: $SHARDPLAN_LIBRARY, or the checkout's
# bazel-bin/capi/libshardplan.so (bazel build //capi:libshardplan.so).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

if [[ -z "${SHARDPLAN_LIBRARY:-}" && ! -e bazel-bin/capi/libshardplan.so ]]; then
  echo "build_all.sh: no libshardplan.so: run 'bazel build //capi:libshardplan.so' or set SHARDPLAN_LIBRARY" >&2
  exit 2
fi
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"

start=$(date +%s.%N)
/usr/bin/python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import zoo_common
sys.exit(zoo_common.build_all(sys.argv[2:]))
' "$here" "$@"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v d="$(ls "$here"/out/*.json | wc -l)" \
  'BEGIN { printf "examples/zoo/out: %d documents in %.2f s (python start and torch import included)\n", d, e - s }'

#!/usr/bin/env bash
# Installs what is missing, builds the CLI and checks the bundled examples:
# examples/tiny-llama.json passes; examples/tiny-llama-broken.json shows
# several independent mistakes reported at once.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh >/dev/null || exit 2
bazel build -c opt //cli:shardplan || exit 2
cli=bazel-bin/cli/shardplan

echo "\$ shardplan check examples/tiny-llama.json"
"$cli" check examples/tiny-llama.json || exit 1
echo
echo "\$ shardplan check examples/tiny-llama-broken.json   # a plan with mistakes"
"$cli" check examples/tiny-llama-broken.json
rc=$?
[[ $rc -eq 1 ]] || { echo "expected exit status 1 for the broken example, got $rc" >&2; exit 1; }

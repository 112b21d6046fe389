#!/usr/bin/env bash
# Installs what is missing, builds the CLI and the library, then:
# - checks the bundled examples: examples/tiny-llama.json passes;
#   examples/tiny-llama-broken.json shows several independent mistakes
#   reported at once;
# - builds the model zoo from PyTorch modules on the meta device
#   (examples/zoo: Llama-3-8B, Qwen3-30B-A3B, Mixtral-8x7B, DeepSeek-V3, each
#   with a broken variant), plans Llama-3-8B, a training setup of it that
#   does not fit its GPUs, and its broken variant.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/setup.sh >/dev/null || exit 2
bazel build -c opt //cli:shardplan //capi:libshardplan.so || exit 2
bin="$(bazel info -c opt bazel-bin 2>/dev/null)"
cli="$bin/cli/shardplan"

echo "\$ shardplan check examples/tiny-llama.json"
"$cli" check examples/tiny-llama.json || exit 1
echo
echo "\$ shardplan check examples/tiny-llama-broken.json   # a plan with mistakes"
"$cli" check examples/tiny-llama-broken.json
rc=$?
[[ $rc -eq 1 ]] || { echo "expected exit status 1 for the broken example, got $rc" >&2; exit 1; }

echo
echo "\$ examples/zoo/build_all.sh   # real models exported from PyTorch"
SHARDPLAN_LIBRARY="$bin/capi/libshardplan.so" bash examples/zoo/build_all.sh || exit 1
echo
echo "\$ shardplan plan examples/zoo/out/llama3-8b.json"
"$cli" plan examples/zoo/out/llama3-8b.json | awk 'NR <= 14 || /^plan:/ { print } END { if (NR > 14) print "  ... (" NR - 14 " more lines)" }' || exit 1
echo
echo "\$ shardplan plan examples/zoo/out/llama3-8b-fsdp-broken.json   # will it fit? 8 x 80 GiB, no ZeRO"
"$cli" plan examples/zoo/out/llama3-8b-fsdp-broken.json | sed -n '/^error/p;/^training memory/,/^    \[/p'
rc=${PIPESTATUS[0]}
[[ $rc -eq 1 ]] || { echo "expected exit status 1 for the training that does not fit, got $rc" >&2; exit 1; }
echo
echo "\$ shardplan plan examples/zoo/out/llama3-8b-broken.json   # tp=16 > 8 KV heads"
"$cli" plan examples/zoo/out/llama3-8b-broken.json | grep -v '^  --> ' | awk '!seen[$1]++ || !/^warning/' | head -12
echo "  ..."

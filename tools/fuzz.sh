#!/usr/bin/env bash
# Runs the fuzz targets (fuzz/BUILD, docs/reliability.md) as fuzzers:
#
#   tools/fuzz.sh [--time SECONDS | --runs N] [--timeout S] [--out DIR] [TARGET...]
#
# Builds them with --config=fuzz (clang, libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer), then runs each TARGET (default: all) for
# SECONDS (default 30) or for N executions, one after the other, starting
# from its seeds (the inputs its test replays) and from the corpus an
# earlier run left in DIR/corpus/TARGET (default DIR: /tmp/shardplan-fuzz).
# A crash, a leak, a timeout (an input taking over S seconds, default 1;
# inputs are at most 64 KiB) or an out-of-memory (over 2 GiB) is a finding:
# its input is kept in DIR/findings/TARGET (emptied at the start of each
# run) and the script fails. The timeout is wall time: on a loaded machine
# replay a timeout alone before believing it. With a longer --timeout (a
# campaign beside other work), an input over 1 s (the bound the engine must
# meet) is still kept, as a slow-unit-* finding, each time one is slower
# than the slowest so far; the run goes on. Check a finding in as
# fuzz/regressions/TARGET/NAME once it is fixed: the target's test then
# replays it in every build. Prints one line per target: executions, edges
# covered, corpus size and findings.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

budget=(-max_total_time=30)
timeout=1
out="${TMPDIR:-/tmp}/shardplan-fuzz"
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --time) budget=("-max_total_time=$2"); shift 2 ;;
    --runs) budget=("-runs=$2"); shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(check_fuzz plan_fuzz capi_fuzz glob_fuzz json_pointer_fuzz)

labels=()
for t in "${targets[@]}"; do labels+=("//fuzz:$t"); done
bazel build --config=fuzz "${labels[@]}" || exit 1
bin="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz"

status=0
for t in "${targets[@]}"; do
  corpus="${out}/corpus/${t}" findings="${out}/findings/${t}" seeds="${out}/seeds/${t}" log="${out}/logs/${t}.log"
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings" "$seeds" "${out}/logs"
  # The seeds are the data files of the target's test, in its runfiles.
  rm -rf "$seeds" && mkdir -p "$seeds"
  find -L "${bin}/${t}.runfiles/shardplan" -type f \
    \( -path '*/examples/*' -o -path '*/tests/*' -o -path '*/fuzz/corpus/*' -o -path '*/fuzz/regressions/*' \) \
    -exec cp -L -t "$seeds" --backup=numbered {} +
  "${bin}/${t}" "${budget[@]}" -dict=fuzz/shardplan.dict -max_len=65536 -timeout="$timeout" -report_slow_units=1 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="${findings}/" "$corpus" "$seeds" > "$log" 2>&1
  rc=$?
  runs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  secs=$(grep -oE 'in [0-9]+ second' "$log" | tail -1 | grep -oE '[0-9]+')
  found=$(find "$findings" -type f | wc -l)
  echo "fuzz ${t}: ${runs:-?} executions in ${secs:-?} s, ${cov:-?} edges, corpus $(ls "$corpus" | wc -l) inputs, ${found} findings (exit ${rc}; log ${log})"
  if [[ $rc -ne 0 || $found -ne 0 ]]; then
    grep -E 'ERROR|FUZZ_CHECK|SUMMARY' "$log" | head -5
    status=1
  fi
done
exit "$status"

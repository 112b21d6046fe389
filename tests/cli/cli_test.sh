#!/usr/bin/env bash
# CLI behaviour: exit codes, text and json formats, usage errors.
set -u
cli="$1"
cases=tests/conformance/cases
ok_doc="$cases/000-spec-example.json"
bad_doc="$cases/053-shared-conflict.json"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
passed=0 failed=0

check() {  # check NAME CONDITION...
  local name="$1"
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name" >&2
  fi
}

run() {  # run ARGS... ; sets rc, out, err
  "$cli" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}

run check "$ok_doc"
check "ok document exits 0" test "$rc" -eq 0
check "ok document prints a summary" grep -q "^$ok_doc: ok: 3 owners, 3 owned parameter names, 1 alias$" "$tmp/out"

run check "$bad_doc"
check "failing document exits 1" test "$rc" -eq 1
check "text diagnostic line" grep -q "^error\[shared-conflict\]: shared parameter '.*' has conflicting layouts$" "$tmp/out"
check "text location line" grep -q "^  --> $bad_doc:/providers/" "$tmp/out"
check "text summary counts errors" grep -qE "^$bad_doc: [0-9]+ errors?$" "$tmp/out"

run check --format json "$ok_doc" "$bad_doc"
check "two documents, worst exit status" test "$rc" -eq 1
check "json: one object per line" test "$(wc -l <"$tmp/out")" -eq 2
check "json lines parse" python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
a, b = (json.loads(l) for l in lines)
assert a["schema"] == "shardplan.result.v1" and a["ok"] is True and a["owned"]["aliases"]
assert b["ok"] is False and b["diagnostics"][0]["code"] == "shared-conflict" and "owned" not in b
assert set(b["diagnostics"][0]) == {"code", "severity", "message", "fqn", "parameter", "pointer"}
' "$tmp/out"

run check --format=json - <"$ok_doc"
check "standard input" test "$rc" -eq 0
from_stdin="$out"
run check --format json "$bad_doc"
bad_mapped="$out"
run check --format json - <"$bad_doc"
check "a mapped file and standard input give the same result" test "$out" = "$bad_mapped"
check "(the result is not empty)" grep -q '"ok":false' "$tmp/out"
run check --format json "$ok_doc"
check "the same for an ok document" test "$out" = "$from_stdin"

: >"$tmp/empty.json"
run check "$tmp/empty.json"
check "an empty file is a document error (exit 1)" test "$rc" -eq 1
check "an empty file is invalid-document" grep -q "^error\[invalid-document\]: malformed JSON" "$tmp/out"

printf '{"schema": "shardplan.v1", "mesh": ' >"$tmp/truncated.json"
run check "$tmp/truncated.json"
check "malformed JSON is a document error (exit 1)" test "$rc" -eq 1
check "malformed JSON is invalid-document" grep -q "^error\[invalid-document\]: malformed JSON at line 1" "$tmp/out"

run check --max-paths 3 "$ok_doc"
check "path limit refuses the document" test "$rc" -eq 1
check "path limit message" grep -q "more than 3 module paths" "$tmp/out"

run check --format json --threads 1 "$bad_doc"
one_thread="$out"
run check --format json --threads=2 "$bad_doc"
check "--threads gives the same result" test "$out" = "$one_thread"
run check --format json --threads 0 "$bad_doc"
check "--threads 0 (all cores): same result" test "$out" = "$one_thread"
run check --format json "$bad_doc"
check "no --threads (all cores): same result" test "$out" = "$one_thread"
run check --format json --threads 4096 "$bad_doc"
check "more threads than cores: same result" test "$out" = "$one_thread"
check "more threads than cores: nothing on stderr" test -z "$err"

run check "$tmp/does-not-exist.json"
check "unreadable file exits 2" test "$rc" -eq 2
check "unreadable file message on stderr" grep -q "cannot read" "$tmp/err"

run check "$tmp"
check "a directory is an unreadable file (exit 2)" test "$rc" -eq 2
check "a directory is named on stderr" grep -q "is a directory" "$tmp/err"

run check <(cat "$ok_doc")
check "a pipe is read to its end" test "$rc" -eq 0

run check "$tmp/does-not-exist.json" "$ok_doc"
check "other documents are still checked" grep -q "ok:" "$tmp/out"
check "unreadable file wins the exit status" test "$rc" -eq 2

for usage in "" "frobnicate" "check" "check --format yaml $ok_doc" "check --bogus $ok_doc" "check --max-paths x $ok_doc" "check --threads -1 $ok_doc"; do
  run $usage
  check "usage error '$usage' exits 2" test "$rc" -eq 2
  check "usage error '$usage' explains" grep -q "usage: shardplan check" "$tmp/err"
done

run --help
check "--help exits 0" test "$rc" -eq 0

# plan: templates fill what no module owns; memory, collectives, the table.
plan_doc=tests/cli/testdata/plan.json
run plan "$plan_doc"
check "plan exits 0 with only warnings" test "$rc" -eq 0
check "plan reports the unused rule" grep -q "^warning\[unused-template-rule\]: template rule 'layers.\*.mlp.gate'" "$tmp/out"
check "plan prints memory per device" grep -q "^memory per device (8 devices): min 9.00 MiB, mean 9.00 MiB, max 9.00 MiB" "$tmp/out"
check "plan prints collectives" grep -q "^collectives: all_reduce@tp x1$" "$tmp/out"
check "plan prints the table with provenance" grep -q "^  layers.0.mlp.down_proj  weight  tp=S(-1)  \[template:tp:layers.\*.mlp.down_proj\]$" "$tmp/out"
run plan --format json "$plan_doc"
check "plan json has the plan sections" grep -q '"plan":{"modules":{"embed":.*"provenance":.*"memory":{"devices":8,.*"communication":\[.*"collectives":{"all_reduce":{"tp":1}}' "$tmp/out"
run check --format json "$plan_doc"
check "check does not plan" test "$(grep -c '"plan"' "$tmp/out")" -eq 0
sed 's/"tp": 4}/"tp": 8}/' "$plan_doc" >"$tmp/plan8.json"
run plan "$tmp/plan8.json"
check "kv heads under tp=8: empty shards are warned" grep -q "^warning\[empty-shard\]" "$tmp/out"

# The allocator (cli/mimalloc.cc): huge pages, whatever the documents' size,
# and segments committed at once, unless the environment decides. Builds
# that keep the default malloc (--config=asan) have no allocator choice to
# check.
if ldd "$cli" | grep -q libmimalloc; then
  option() {  # option $1 as mimalloc reports it at start-up, for the command that follows
    local name=$1
    shift
    MIMALLOC_VERBOSE=1 "$cli" "$@" 2>&1 >/dev/null | grep -o "option '$name': [0-9]*" | grep -o '[0-9]*$'
  }
  check "huge pages for a small document" test "$(option large_os_pages check "$ok_doc")" = 1
  truncate -s 65M "$tmp/big.json"  # sparse: 65 MiB that take no disk
  check "huge pages past 64 MiB of documents" test "$(option large_os_pages check "$ok_doc" "$tmp/big.json")" = 1
  rm -f "$tmp/big.json"
  check "segments committed at once" test "$(option eager_commit_delay check "$ok_doc")" = 0
  check "the environment decides first" test "$(MIMALLOC_LARGE_OS_PAGES=0 option large_os_pages check "$ok_doc")" = 0
  check "the environment decides each option: its own" \
    test "$(MIMALLOC_EAGER_COMMIT_DELAY=2 option eager_commit_delay check "$ok_doc")" = 2
  check "the environment decides each option: not the others" \
    test "$(MIMALLOC_EAGER_COMMIT_DELAY=2 option large_os_pages check "$ok_doc")" = 1
fi

echo "cli: $passed passed, $failed failed"
test "$failed" -eq 0

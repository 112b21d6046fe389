#!/usr/bin/env bash
# CLI behaviour: exit codes, text and json formats, usage errors.
set -u
cli="$1"
gen_model="$2"
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
check "text location line: DOC:LINE:COL at the pointer" grep -qE "^  --> $bad_doc:[0-9]+:[0-9]+ at /providers/" "$tmp/out"
check "text summary counts errors, per code" grep -qE "^$bad_doc: 2 errors \(1 shared-conflict, 1 nested-duplicate\)$" "$tmp/out"

run check --format json "$ok_doc" "$bad_doc"
check "two documents, worst exit status" test "$rc" -eq 1
check "json: one object per line" test "$(wc -l <"$tmp/out")" -eq 2
check "json lines parse" python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
a, b = (json.loads(l) for l in lines)
assert a["schema"] == "shardplan.result.v1" and a["ok"] is True and a["owned"]["aliases"]
assert b["ok"] is False and b["diagnostics"][0]["code"] == "shared-conflict" and "owned" not in b
assert set(b["diagnostics"][0]) == {"code", "severity", "message", "fqn", "parameter", "pointer", "help", "fix"}
assert b["diagnostics"][0]["fix"][0]["op"] == "replace"
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
check "unreadable file: the reason on stderr" grep -q "^shardplan: cannot read '.*does-not-exist.json': No such file or directory$" "$tmp/err"

run check "$tmp"
check "a directory is an unreadable file (exit 2)" test "$rc" -eq 2
check "a directory is named on stderr" grep -q "is a directory" "$tmp/err"

run check <(cat "$ok_doc")
check "a pipe is read to its end" test "$rc" -eq 0

run check "$tmp/does-not-exist.json" "$ok_doc"
check "other documents are still checked" grep -q "ok:" "$tmp/out"
check "unreadable file wins the exit status" test "$rc" -eq 2

for usage in "" "frobnicate" "check" "check --format yaml $ok_doc" "check --bogus $ok_doc" "check --max-paths x $ok_doc" "check --threads -1 $ok_doc" "check --max-diagnostics -1 $ok_doc" "check --color sometimes $ok_doc"; do
  run $usage
  check "usage error '$usage' exits 2" test "$rc" -eq 2
  check "usage error '$usage' explains" grep -q "usage: shardplan check" "$tmp/err"
done

run --help
check "--help exits 0" test "$rc" -eq 0
run --version
check "--version exits 0" test "$rc" -eq 0
check "--version names the version" grep -qE "^shardplan [0-9]+\.[0-9]+\.[0-9]+ \(C ABI [0-9]+\)$" "$tmp/out"

# Did you mean: a mistyped command, option or value.
run chek "$ok_doc"
check "a mistyped command is suggested" grep -q "unknown command 'chek'; did you mean 'check'?" "$tmp/err"
run check --fromat json "$ok_doc"
check "a mistyped option is suggested" grep -q "unknown option '--fromat'; did you mean '--format'?" "$tmp/err"
run check --max-diagnostic=3 "$ok_doc"
check "a mistyped option=value is suggested" grep -q "did you mean '--max-diagnostics'?" "$tmp/err"
run check --format jsno "$ok_doc"
check "a mistyped format is suggested" grep -q "unknown format 'jsno'; did you mean 'json'?" "$tmp/err"
run check --zzzzzz "$ok_doc"
check "nothing near: no suggestion" test "$(grep -c "did you mean" "$tmp/err")" -eq 0

# Line and column of the declaration: the first diagnostic of the
# shared-conflict case, located by hand with Python.
run check --color never "$bad_doc"
first_location=$(grep -m1 -- "-->" "$tmp/out")
check "line:col is where the pointer's declaration starts" python3 - "$bad_doc" "$first_location" <<'PY'
import json, re, sys
doc, line = sys.argv[1], sys.argv[2]
m = re.fullmatch(r"  --> (.*):(\d+):(\d+) at (/.*)", line)
assert m and m.group(1) == doc, line
text = open(doc, encoding="utf-8").read()
tokens = [t.replace("~1", "/").replace("~0", "~") for t in m.group(4).split("/")[1:]]
# Walk the document to the member, then find its key after the parent's start.
value, pos = json.loads(text), 0
for t in tokens:
    key = json.dumps(t)
    pos = text.index(key + ":", pos) if key + ":" in text[pos:] else text.index(key + " :", pos)
lines = text[:pos].split("\n")
assert (len(lines), len(lines[-1]) + 1) == (int(m.group(2)), int(m.group(3))), (line, len(lines), len(lines[-1]) + 1)
PY
run check - <"$bad_doc"
check "standard input is located too" grep -qE "^  --> -:[0-9]+:[0-9]+ at /providers/" "$tmp/out"

# A storm from one over-wide glob (fnmatch's '*' crosses dots): grouped,
# capped, counted.
"$gen_model" --kind deepseek --layers 5 --experts 64 --dense 1 |
  sed 's/"layers\.\*\.mlp\.experts\.\[0-9\]"/"layers.*.mlp.experts.*"/' >"$tmp/storm.json"
run check --format json --max-diagnostics 0 "$tmp/storm.json"
total=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["diagnostics"]))' "$tmp/out")
check "the storm has many diagnostics" test "$total" -gt 1000
check "json: groups count every diagnostic and list each once" python3 - "$tmp/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d, groups = r["diagnostics"], r["groups"]
assert sum(g["count"] for g in groups) == len(d)
listed = sorted(i for g in groups for i in g["listed"])
assert listed == list(range(len(d)))
for g in groups:
    assert all(d[i]["code"] == g["code"] and d[i]["pointer"] == g["pointer"] for i in g["listed"])
counts = {}
for x in d:
    counts[x["code"]] = counts.get(x["code"], 0) + 1
assert r["counts"] == counts and list(r["counts"]) == list(dict.fromkeys(x["code"] for x in d))
PY
full_json="$tmp/storm-full.json"
cp "$tmp/out" "$full_json"
run check --format json --max-diagnostics 10 "$tmp/storm.json"
check "json --max-diagnostics 10: ten listed, the same groups and counts" python3 - "$tmp/out" "$full_json" <<'PY'
import json, sys
r, full = (json.load(open(p)) for p in sys.argv[1:])
assert len(r["diagnostics"]) == 10 and r["diagnostics"][0] == full["diagnostics"][0]
assert [(g["code"], g["pointer"], g["count"]) for g in r["groups"]] == [(g["code"], g["pointer"], g["count"]) for g in full["groups"]]
assert all(len(g["listed"]) <= 3 and all(i < 10 for i in g["listed"]) for g in r["groups"])
assert r["counts"] == full["counts"]
PY
run check --color never "$tmp/storm.json"
check "text: a storm exits 1" test "$rc" -eq 1
check "text: at most 50 diagnostics by default" test "$(grep -c '^error\[' "$tmp/out")" -le 50
check "text: each group once with the count of the rest" grep -qE "^  \.\.\. and [0-9]+ more at /providers/native/0/parallel \([0-9]+ overlapping-communication in all\)$" "$tmp/out"
check "text: the first diagnostic is the reference's" grep -m1 -q "^error\[overlapping-communication\]: overlapping communication owners at 'layers.1.mlp.experts.0' and 'layers.1.mlp.experts.0.gate_proj'$" "$tmp/out"
check "text: the summary counts every diagnostic, per code" grep -qE "^$tmp/storm.json: $total errors \([0-9]+ overlapping-communication, .*\)$" "$tmp/out"
run check --color never --max-diagnostics 4 "$tmp/storm.json"
check "text --max-diagnostics 4: four shown" test "$(grep -c '^error\[' "$tmp/out")" -eq 4
check "text --max-diagnostics 4: the groups not shown are counted" grep -qE "^\.\.\. [0-9]+ more diagnostics in [0-9]+ groups not shown \(--max-diagnostics 0 shows every one\)$" "$tmp/out"
run check --color never --max-diagnostics 0 "$tmp/storm.json"
check "text --max-diagnostics 0: every one" test "$(grep -c '^error\[' "$tmp/out")" -eq "$total"

# SARIF 2.1.0: the fields code-scanning tools read (GitHub's upload-sarif:
# version, runs[].tool.driver.name and rules, results' ruleId, ruleIndex,
# level, message.text, locations' artifact URI and region), and the regions
# agree with the text output's DOC:LINE:COL.
cp "$bad_doc" "$tmp/with space.json"
run check --format sarif "$bad_doc" "$tmp/storm.json" "$tmp/with space.json" "$ok_doc"
check "sarif: exits as check does" test "$rc" -eq 1
run check --color never "$bad_doc" "$tmp/storm.json" "$tmp/with space.json" "$ok_doc"
cp "$tmp/out" "$tmp/text-out"
run check --format sarif "$bad_doc" "$tmp/storm.json" "$tmp/with space.json" "$ok_doc"
check "sarif: one log, every document, every rule" python3 - "$tmp/out" "$tmp/text-out" "$bad_doc" "$tmp" <<'PY'
import json, re, sys, urllib.parse
log = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
bad_doc, tmp = sys.argv[3], sys.argv[4]
assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
assert len(log["runs"]) == 1
run = log["runs"][0]
driver = run["tool"]["driver"]
assert driver["name"] == "shardplan" and re.fullmatch(r"\d+\.\d+\.\d+", driver["semanticVersion"])
rules = driver["rules"]
ids = [r["id"] for r in rules]
assert len(ids) == len(set(ids)) >= 30 and "shared-conflict" in ids
for r in rules:
    assert r["shortDescription"]["text"] and "{" not in r.get("fullDescription", {}).get("text", "")
    assert re.fullmatch(r"docs/(semantics|planning)\.md#" + re.escape(r["id"]), r["helpUri"]), r["helpUri"]
    assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
uris = [a["location"]["uri"] for a in run["artifacts"]]
assert uris[0] == bad_doc and urllib.parse.unquote(uris[1]) == "file://" + tmp + "/storm.json", uris
assert "%20" in uris[2] and " " not in uris[2], uris[2]
assert len(uris) == 4
# The text's locations, in order: DOC:LINE:COL at POINTER.
located = [m.groups() for m in (re.fullmatch(r"  --> (.*):(\d+):(\d+) at (.*)", l) for l in text) if m]
results = run["results"]
assert len(results) == len(located) > 20, (len(results), len(located))
for r, (doc, line, col, pointer) in zip(results, located):
    assert ids[r["ruleIndex"]] == r["ruleId"] and r["level"] in ("error", "warning", "note")
    assert r["message"]["text"]
    loc = r["locations"][0]
    art = loc["physicalLocation"]["artifactLocation"]
    assert urllib.parse.unquote(art["uri"]).endswith(doc.lstrip(".")) and uris[art["index"]] == art["uri"]
    region = loc["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (int(line), int(col))
    assert loc["logicalLocations"][0]["fullyQualifiedName"] == pointer == r["properties"]["pointer"]
    assert r["properties"]["groupCount"] >= 1
PY
run check --format sarif --max-diagnostics 2 "$tmp/storm.json"
check "sarif: --max-diagnostics caps the results" python3 -c '
import json, sys; assert len(json.load(open(sys.argv[1]))["runs"][0]["results"]) == 2' "$tmp/out"

# Color: --color always, never, and auto (not a terminal here, and NO_COLOR).
run check --color always "$bad_doc"
check "--color always paints" grep -q $'\x1b\[1;31merror\[shared-conflict\]' "$tmp/out"
run check "$bad_doc"
check "auto, not a terminal: no color" test "$(grep -c $'\x1b' "$tmp/out")" -eq 0
if command -v script >/dev/null; then
  script -qec "$cli check $bad_doc" /dev/null >"$tmp/tty.txt" 2>&1
  check "auto, a terminal: color" grep -q $'\x1b\[1;31m' "$tmp/tty.txt"
  NO_COLOR=1 script -qec "$cli check $bad_doc" /dev/null >"$tmp/tty.txt" 2>&1
  check "auto, a terminal with NO_COLOR: none" test "$(grep -c $'\x1b\[' "$tmp/tty.txt")" -eq 0
fi

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
check "warnings alone pass" test "$rc" -eq 0
run plan --werror "$tmp/plan8.json"
check "--werror: warnings fail (exit 1)" test "$rc" -eq 1
check "--werror: the summary says why" grep -q "failed: warnings are errors (--werror)$" "$tmp/out"
run plan --werror "$ok_doc"
check "--werror: a clean document passes" test "$rc" -eq 0

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

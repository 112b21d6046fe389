#!/usr/bin/env python3
"""Measures the diagnostic storm's bounds and writes tools/perf/storm.json.

    python3 tools/perf/storm.py [--runs N] [--shardplan CLI --gen-model GEN] [--before CLI] [--keep DIR]

1. builds the CLI and the generator (-c opt; skipped when --shardplan and --gen-model name them)
   and copies them to a temporary directory;
2. generates the valid document, `gen_model --kind generic --params 1000000 --owners native`
   (one native request, match ["blocks.*.w*"]), and the storm document: the same text with that
   match made over-wide, ["blocks.*"], which also matches every block, so that every one of
   them overlaps its weights' owners and declares a parameter and inputs it does not have
   (about 1.25 million errors);
3. runs `/usr/bin/time -f '%e %M' shardplan check --threads T [...] DOC > OUT` for T = 1 and 0
   (all cores): the valid document (default text), the storm (default text; --format json
   --max-diagnostics 50; --format json, which lists every diagnostic) and, with --before, an
   earlier build of the CLI on both documents' text. One untimed warm-up run of each, then N
   rounds of every run, interleaved, each after measure.py's preback; medians of the wall time
   (around the process) and of the peak RSS (%M); the bytes written to standard output, the exit
   status and the diagnostics counted (the summary line's counts, or the result JSON's "counts");
4. writes storm.json with the machine, the commit, the documents' sizes, every run and the
   issue's bounds: the storm's text run and its JSON of every diagnostic (which the CLI streams)
   within 3x the document in peak RSS and 3x the valid document's run in time, and under 1 MB of
   text. render.py turns it into a section of
   docs/performance.md (this script re-renders it at the end). Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

PARAMS = 1_000_000


def gen_args(params=PARAMS):
    return ["--kind", "generic", "--params", str(params), "--owners", "native"]
VALID_MATCH = b'"match":["blocks.*.w*"]'
STORM_MATCH = b'"match":["blocks.*"]'

# The bounds on the storm document's default text run and its JSON of every diagnostic.
RSS_LIMIT = 3.0  # peak RSS / the document's bytes
TIME_LIMIT = 3.0  # wall time / the valid document's, same thread count
TEXT_LIMIT = 1_000_000  # bytes of default text output ("under 1 MB")

THREADS = (1, 0)  # 0: all cores


def thread_label(t):
    return "1 thread" if int(t) == 1 else "all cores"


# (id, document, binary, extra arguments, what)
CASES = [
    ("valid-text", "valid", "cli", [], "valid document, default text"),
    ("storm-text", "storm", "cli", [], "storm, default text (`--max-diagnostics 50`)"),
    ("storm-json50", "storm", "cli", ["--format", "json", "--max-diagnostics", "50"],
     "storm, `--format json --max-diagnostics 50`"),
    ("storm-json-all", "storm", "cli", ["--format", "json"], "storm, `--format json` (every diagnostic)"),
    ("before-valid-text", "valid", "before", [], "before: valid document, text"),
    ("before-storm-text", "storm", "before", [], "before: storm, text (every diagnostic)"),
]


# --- pure functions (tools/perf/tests/test_storm.py) --------------------------------------------


def make_storm(valid: bytes) -> bytes:
    """The storm document: the valid one with its native request's match made over-wide. The match
    must occur exactly once."""
    n = valid.count(VALID_MATCH)
    if n != 1:
        raise ValueError(f"expected {VALID_MATCH.decode()} once in the valid document, found it {n} times")
    return valid.replace(VALID_MATCH, STORM_MATCH)


def parse_time(text: str):
    """`/usr/bin/time -f '%e %M'` output (its last line; a line before it may say the command exited
    with a non-zero status) -> (elapsed seconds, peak RSS in bytes)."""
    lines = [l for l in text.strip().splitlines() if l.strip()]
    if not lines:
        raise ValueError("no /usr/bin/time output")
    fields = lines[-1].split()
    if len(fields) != 2:
        raise ValueError(f"unexpected /usr/bin/time output: {lines[-1]!r}")
    return float(fields[0]), int(fields[1]) * 1024


SUMMARY = re.compile(
    r": (?:ok: \d+ owners?, \d+ owned parameter names?, \d+ alias(?:es)?|(?P<errors>\d+) errors?)"
    r"(?:, (?P<warnings>\d+) warnings?)?(?: \((?P<codes>[^()]*)\))?(?:; .*)?$")


def parse_summary(line: str):
    """The CLI's text summary line -> {"total", "errors", "warnings", "by_code"}, or None. The total
    is the sum of the per-code counts when the line has them (since diagnostics are grouped), else
    errors and warnings (earlier CLIs, or a single diagnostic)."""
    m = SUMMARY.search(line.rstrip("\n"))
    if not m:
        return None
    errors = int(m.group("errors") or 0)
    warnings = int(m.group("warnings") or 0)
    by_code = {}
    if m.group("codes"):
        for part in m.group("codes").split(", "):
            count, _, code = part.partition(" ")
            by_code[code] = int(count)
    total = sum(by_code.values()) if by_code else errors + warnings
    return {"total": total, "errors": errors, "warnings": warnings, "by_code": by_code}


def json_counts(data: bytes):
    """The CLI's `--format json` output (one document) -> {"total", "listed", "by_code"}: every
    diagnostic (the "counts"), and those listed in "diagnostics" (each is in one group's "listed").
    Reads only "groups" and "counts" (the diagnostics of a storm take hundreds of MB); an output
    without them (an earlier CLI) is parsed whole."""
    dec = json.JSONDecoder()
    # Top-level keys come before any other "groups": a diagnostic's keys are fixed, and a string
    # cannot hold `"groups":` (its quotes are escaped).
    at = data.find(b'"groups":[')
    if at < 0:
        doc = json.loads(data)
        by_code = {}
        for d in doc["diagnostics"]:
            by_code[d["code"]] = by_code.get(d["code"], 0) + 1
        return {"total": len(doc["diagnostics"]), "listed": len(doc["diagnostics"]), "by_code": by_code}
    tail = data[at:].decode()
    groups, end = dec.raw_decode(tail, len('"groups":'))
    rest = tail[end:]
    if not rest.startswith(',"counts":'):
        raise ValueError("no \"counts\" after \"groups\"")
    by_code, _ = dec.raw_decode(rest, len(',"counts":'))
    return {"total": sum(by_code.values()), "listed": sum(len(g["listed"]) for g in groups), "by_code": by_code}


def last_line(path: Path, tail_bytes=65536) -> str:
    """The last line of a (possibly very large) file."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - tail_bytes))
        lines = f.read().decode(errors="replace").rstrip("\n").splitlines()
    return lines[-1] if lines else ""


def median_run(samples):
    """The medians of N runs of one case and thread count."""
    med = statistics.median
    return {"wall_s": round(med(s["wall_s"] for s in samples), 4),
            "time_e_s": round(med(s["time_e_s"] for s in samples), 2),
            "rss_bytes": int(med(s["rss_bytes"] for s in samples)),
            "stdout_bytes": int(med(s["stdout_bytes"] for s in samples))}


def bound(key, what, measured, limit, unit, detail, strict=False):
    """One bound, as render.verdict reads it (lower is better)."""
    met = measured < limit if strict else measured <= limit
    return {"key": key, "what": what, "measured": measured, "limit": limit, "unit": unit,
            "met": met, "better": "lower", "strict": strict, "detail": detail}


def compute_bounds(doc_bytes, cases):
    """The issue's bounds: peak RSS and time on the storm's default text run and on its
    `--format json` run of every diagnostic (streamed, so bounded too), per thread count, and the
    size of the text; the same ratios for the other runs, without limits. `doc_bytes`: the storm
    document's size; `cases`: {case id: {threads: medians}} (threads as strings)."""
    out, other = [], []
    valid = cases.get("valid-text")
    for cid, prefix, label in (("storm-text", "", "default text"),
                               ("storm-json-all", "json_", "`--format json` (every diagnostic)")):
        storm = cases.get(cid)
        if not storm or not valid:
            continue
        for t in sorted(storm, key=lambda t: THREADS.index(int(t))):
            s, v = storm[t], valid[t]
            out.append(bound(f"{prefix}rss_ratio_{t}", f"storm, {label}, {thread_label(t)}: peak RSS / document",
                             s["rss_bytes"] / doc_bytes, RSS_LIMIT, "x",
                             f"{s['rss_bytes'] / 1e6:.0f} MB against a {doc_bytes / 1e6:.0f} MB document"))
            out.append(bound(f"{prefix}time_ratio_{t}", f"storm, {label}, {thread_label(t)}: time / valid document's",
                             s["wall_s"] / v["wall_s"], TIME_LIMIT, "x",
                             f"{s['wall_s']:.2f} s against {v['wall_s']:.2f} s"))
        if cid == "storm-text":
            biggest = max(x["stdout_bytes"] for x in storm.values())
            out.append(bound("text_bytes", "storm, default text: output", biggest, TEXT_LIMIT, "bytes", "",
                             strict=True))
    for cid in ("storm-json50", "before-storm-text"):
        c = cases.get(cid)
        if not c:
            continue
        base = cases.get("before-valid-text" if cid.startswith("before") else "valid-text") or {}
        for t, m in sorted(c.items(), key=lambda kv: THREADS.index(int(kv[0]))):
            other.append({"case": cid, "threads": t, "rss_ratio": m["rss_bytes"] / doc_bytes,
                          "time_ratio": m["wall_s"] / base[t]["wall_s"] if t in base else None,
                          "stdout_bytes": m["stdout_bytes"]})
    return out, other


# --- measuring ------------------------------------------------------------------------------------


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, cwd=REPO, text=True, capture_output=True, **kw).stdout


def machine():
    model, cores, mem_kb = "unknown", 0, 0
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("processor"):
                cores += 1
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
    return {"cpu_model": model, "cores": cores, "memory_gib": round(mem_kb / 2**20, 1),
            "kernel": platform.release()}


def commit():
    """HEAD, and whether the sources the binaries are built from (as measure.py counts them) differ
    from it."""
    head = sh(["git", "rev-parse", "--short", "HEAD"]).strip()
    dirty = sh(["git", "status", "--porcelain", "--", "core", "cli", "bench", "third_party"]).strip()
    return head + (" + uncommitted changes" if dirty else "")


def preback(nbytes):
    """measure.py's preback: writes and frees `nbytes` of fresh memory, so that the run after it
    gets memory the VM's host backs (docs/performance.md, section 2)."""
    from measure import preback as pb  # noqa: E402  (tools/perf/measure.py)
    pb(nbytes)


def run_once(binary, doc, threads, extra, work: Path):
    """One run: /usr/bin/time's figures, the bytes on standard output, the exit status, the
    diagnostics counted."""
    out, err, tfile = work / "stdout", work / "stderr", work / "time.txt"
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", str(tfile), str(binary), "check", "--threads", str(threads),
           *extra, str(doc)]
    with open(out, "wb") as o, open(err, "wb") as e:
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, stdout=o, stderr=e).returncode
        wall = time.perf_counter() - t0
    elapsed, rss = parse_time(tfile.read_text())
    if "--format" in extra:
        counts = json_counts(out.read_bytes())
    else:
        line = last_line(out)
        counts = parse_summary(line)
        if counts is None:
            raise RuntimeError(f"{' '.join(cmd)}: exit {rc}, no summary line: {line[:300]!r}; "
                               f"stderr: {err.read_text(errors='replace')[-300:]!r}")
    return {"wall_s": round(wall, 4), "time_e_s": elapsed, "rss_bytes": rss, "stdout_bytes": out.stat().st_size,
            "exit_code": rc, "diagnostics": counts["total"], "listed": counts.get("listed"),
            "by_code": counts["by_code"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each case and thread count (default 3)")
    ap.add_argument("--shardplan", type=Path, help="the CLI to measure (default: build //cli:shardplan -c opt)")
    ap.add_argument("--gen-model", type=Path, help="bench's generator (default: build //bench:gen_model -c opt)")
    ap.add_argument("--commit", help="what --shardplan was built from, for storm.json (default: HEAD, "
                    "with \"+ uncommitted changes\" when core/, cli/, bench/ or third_party/ differ from it)")
    ap.add_argument("--before", type=Path, help="an earlier CLI to run on both documents' text too")
    ap.add_argument("--before-commit", default=None, help="what --before was built from, for storm.json")
    ap.add_argument("--params", type=int, default=PARAMS,
                    help="parameters of the documents (default 1000000, the issue's; fewer for a quick try)")
    ap.add_argument("--keep", type=Path, help="keep the documents and the last outputs in DIR")
    ap.add_argument("--out", type=Path, default=HERE / "storm.json", help="default: tools/perf/storm.json")
    ap.add_argument("--no-render", action="store_true", help="do not re-render docs/performance.md")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    start = time.time()
    loadavg_start = open("/proc/loadavg").read().split()[:3]
    sys.path.insert(0, str(HERE))

    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        work, tmp = args.keep, None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="storm.")
        work = Path(tmp.name)
    try:
        bins = {}
        if not (args.shardplan and args.gen_model):
            print("[storm] bazel build -c opt //cli:shardplan //bench:gen_model", flush=True)
            sh(["bazel", "build", "-c", "opt", "//cli:shardplan", "//bench:gen_model"])
            opt = Path(sh(["bazel", "info", "-c", "opt", "bazel-bin"]).strip())
        for name, given, built in [("cli", args.shardplan, "cli/shardplan"), ("gen", args.gen_model, "bench/gen_model"),
                                   ("before", args.before, None)]:
            src = given or (opt / built if built else None)
            if src is None:
                continue
            bins[name] = work / f"{name}.bin"  # a copy: others may rebuild bazel-bin meanwhile
            shutil.copyfile(src, bins[name])
            bins[name].chmod(0o755)

        docs = {"valid": work / "valid.json", "storm": work / "storm.json"}
        gen = gen_args(args.params)
        print(f"[storm] gen_model {' '.join(gen)}", flush=True)
        subprocess.run([str(bins["gen"]), *gen, "--out", str(docs["valid"])], check=True)
        docs["storm"].write_bytes(make_storm(docs["valid"].read_bytes()))
        sizes = {k: p.stat().st_size for k, p in docs.items()}

        cases = [c for c in CASES if c[2] in bins]
        runs_dir = work / "run"
        runs_dir.mkdir(exist_ok=True)
        result_cases = {cid: {"what": what, "document": doc, "binary": "before" if b == "before" else "cli",
                              "args": ["check", "--threads", "T", *extra], "warmup": {}, "samples": {}}
                        for cid, doc, b, extra, what in cases}

        def run(case, threads):
            cid, doc, b, extra, _ = case
            return run_once(bins[b], docs[doc], threads, extra, runs_dir)

        print("[storm] warm-up", flush=True)
        back = {}
        for case in cases:
            for t in THREADS:
                r = run(case, t)
                result_cases[case[0]]["warmup"][str(t)] = r
                back[case[0], t] = r["rss_bytes"] * 5 // 4
        for i in range(args.runs):
            print(f"[storm] round {i + 1} of {args.runs}", flush=True)
            for case in cases:  # interleaved, so slow stretches of a shared machine hit every case alike
                for t in THREADS:
                    preback(back[case[0], t])
                    r = run(case, t)
                    result_cases[case[0]]["samples"].setdefault(str(t), []).append(r)

        medians = {}
        for cid, c in result_cases.items():
            c["median"] = {}
            for t, samples in c["samples"].items():
                c["median"][t] = median_run(samples)
                # The same document gives the same diagnostics and exit status on every run.
                first = samples[0]
                for s in samples + [c["warmup"][t]]:
                    if (s["exit_code"], s["diagnostics"], s["listed"]) != (first["exit_code"], first["diagnostics"],
                                                                           first["listed"]):
                        raise RuntimeError(f"{cid}, threads {t}: runs disagree: {s} against {first}")
                c["median"][t].update(exit_code=first["exit_code"], diagnostics=first["diagnostics"],
                                      listed=first["listed"])
                c.setdefault("by_code", first["by_code"])  # diagnostics per code
                for s in samples + [c["warmup"][t]]:
                    s.pop("by_code")
            medians[cid] = c["median"]
        bounds, other = compute_bounds(sizes["storm"], medians)

        m = machine()
        m["loadavg_start"], m["loadavg_end"] = loadavg_start, open("/proc/loadavg").read().split()[:3]
        result = {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python3 tools/perf/storm.py" + (f" --runs {args.runs}" if args.runs != 3 else "")
                       + (f" --params {args.params}" if args.params != PARAMS else ""),
            "elapsed_s": round(time.time() - start, 1),
            "commit": args.commit or commit(),
            "before_commit": args.before_commit if "before" in bins else None,
            "machine": m,
            "runs": args.runs,
            "documents": {
                "valid": {"bytes": sizes["valid"], "gen_model": " ".join(gen), "match": VALID_MATCH.decode()},
                "storm": {"bytes": sizes["storm"], "match": STORM_MATCH.decode()},
            },
            "limits": {"rss_ratio": RSS_LIMIT, "time_ratio": TIME_LIMIT, "text_bytes": TEXT_LIMIT},
            "cases": result_cases,
            "bounds": bounds,
            "other_ratios": other,
        }
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        for b in bounds:
            print(f"[storm] {b['what']}: {b['measured']:,.2f} (limit {b['limit']:,}) "
                  f"{'met' if b['met'] else 'MISSED'}", flush=True)
        print(f"[storm] wrote {args.out}", flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    if not args.no_render and args.out.resolve() == (HERE / "storm.json").resolve():
        import render  # noqa: E402  (re-render docs/performance.md with the new section)
        render.main([])


if __name__ == "__main__":
    main()

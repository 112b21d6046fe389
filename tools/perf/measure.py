#!/usr/bin/env python3
"""Measures the shardplan CLI and engine; writes every number of docs/performance.md.

    python3 tools/perf/measure.py            # full run (median of 3 everywhere)
    python3 tools/perf/measure.py --quick    # 1 run of the 1M-parameter document, shorter benchmarks

What it does, in order (python3 standard library only):

 1. builds `//cli:shardplan`, `//bench:gen_model`, `//bench:round_trip` and `//core:stages_benchmark` with
    `bazel build -c opt` (or takes --cli/--gen/--bench paths) and copies the binaries to a
    temporary directory, so a rebuild during the run cannot mix two engines;
 2. generates documents with gen_model: generic models of 10k..1M parameters, the DeepSeek-V3-sized
    model (generator defaults), DeepSeek-like variants sized like the reference's figures
    (~0.5k, ~4k, ~16k, ~63k modules) and the same models with a final plan;
 3. with --wait-steady S, waits up to S seconds for the CPUs to be steady (equal speeds on a probe,
    a short round trip: wait_steady), and again before step 4;
    runs `shardplan check --threads 1` and `--threads 2` on each under
    `/usr/bin/time -f "%e %M %U %S"` (one untimed warm-up run each, then runs interleaved, each
    after writing and freeing its peak RSS in fresh memory (preback), median of --runs);
 4. runs the Google Benchmark suite (if it builds) on the largest model of each kind, pinned to one
    CPU with `taskset -c 0` (oneTBB then uses one thread) and on both CPUs; before and after, times
    each CPU alone on a probe benchmark and a cache line's round trip between two CPUs;
 5. profiles: callgrind of the DeepSeek document and of a 100k-parameter document (--threads 1),
    `perf` of the largest generic document (after a warm-up run), massif (heap at its peak) of the
    100k document;
 6. writes tools/perf/results.json, tools/perf/profile.txt and tools/perf/time_memory.svg
    (plot.py), then docs/performance.md (render.py).

Nothing in docs/performance.md is typed by hand: re-run this script to refresh it.
"""
from __future__ import annotations

import argparse
import datetime
import json
import mmap
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import plot  # noqa: E402  (tools/perf/plot.py)
import render  # noqa: E402  (tools/perf/render.py)

# --- what is measured -------------------------------------------------------------------------

GENERIC_SIZES = [10_000, 30_000, 100_000, 300_000, 1_000_000]

# The reference Python implementation's figures, as given in the issue: (modules, seconds).
REFERENCE = [(500, 0.03), (4_000, 0.32), (16_000, 2.1), (63_000, 5.6)]

# DeepSeek-like variants whose module count is close to each reference figure
# (gen_model --kind deepseek --layers L --experts E; 3 dense layers). The module counts
# reported are counted in the generated documents, not taken from this table.
REFERENCE_VARIANTS = {
    500: {"layers": 8, "experts": 18},
    4_000: {"layers": 16, "experts": 72},
    16_000: {"layers": 61, "experts": 64},
    63_000: {"layers": 64, "experts": 256},
}

# Targets of the performance issue.
TARGETS = {
    "checks_ns_per_param_path": 100.0,  # claims and checks on an in-memory model, 1 thread
    "deepseek_cli_s": 0.050,  # end-to-end CLI, DeepSeek-V3-sized document
    "deepseek_vs_reference": 100.0,  # ... i.e. >= 100x faster than the reference (5.6 s)
    "million_cli_s": 1.5,  # end-to-end CLI, 1,000,000-parameter document
    "million_rss_over_doc": 3.0,  # peak RSS <= 3x the document's size
    "decade_ratio": 11.0,  # 10x the parameters costs <= 11x the time
    "parallel_speedup": 1.7,  # parallel phases on 2 cores
}
REFERENCE_DEEPSEEK_S = 5.6
# Benchmark repetitions of the largest generic models (each end-to-end call takes seconds).
HEAVY_REPETITIONS = 3
# Runs (processes) of each model's benchmarks per CPU count; the median run is kept.
BENCHMARK_ROUNDS = 3

# Benchmark phases in pipeline order and the core/ file that implements each (used to find
# which phases run in parallel: a call site of a parallel helper in that file, attributed to
# BM_Nesting when the enclosing function is the nesting check).
PHASES = ["BM_Parse", "BM_BuildTree", "BM_Collect", "BM_Nesting", "BM_OwnerChecks", "BM_Claims", "BM_PlanCheck"]
PHASE_FILES = {
    "model/parse.cc": "BM_Parse",
    "model/document_checks.cc": "BM_Parse",
    "model/module_tree.cc": "BM_BuildTree",
    "ownership/collect.cc": "BM_Collect",
    "ownership/native_match.cc": "BM_Collect",
    "ownership/nesting.cc": "BM_Nesting",
    "ownership/owner_checks.cc": "BM_OwnerChecks",
    "ownership/claims.cc": "BM_Claims",
    "planning/plan_check.cc": "BM_PlanCheck",
}
# "Claims and checks on an in-memory model": every phase after parsing and building the tree.
CHECK_PHASES = ["BM_Collect", "BM_Nesting", "BM_OwnerChecks", "BM_Claims", "BM_PlanCheck"]

# Engine entry points whose inclusive cost is the cost of a phase (callgrind, simplified names).
PROFILE_PHASES = [
    ("parse", "shardplan::ParseDocument"),
    ("module tree", "shardplan::ModuleTree::ModuleTree"),
    ("collect owners", "shardplan::CollectOwners"),
    ("nesting", "shardplan::CheckNesting"),
    ("owner checks", "shardplan::CheckOwners"),
    ("claims", "shardplan::AssignParameters"),
    ("plan check", "shardplan::ValidatePlan"),
]


def log(*args):
    print("[measure]", *args, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


# --- machine ----------------------------------------------------------------------------------


def cpu_times():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return idle, sum(fields[:8])


def busy_fraction(seconds=1.0):
    """Share of all CPUs busy with other processes' work over a short window (this script's own
    CPU time, e.g. the kernel unmapping a document it has just counted, is subtracted)."""
    hz = os.sysconf("SC_CLK_TCK")
    time.sleep(0.3)
    own0 = sum(os.times()[:2])
    i0, t0 = cpu_times()
    time.sleep(seconds)
    i1, t1 = cpu_times()
    own = (sum(os.times()[:2]) - own0) * hz
    if t1 == t0:
        return 0.0
    return round(max(0.0, 1.0 - (i1 - i0) / (t1 - t0) - own / (t1 - t0)), 3)


def wait_idle(limit_s, threshold=0.15):
    if limit_s <= 0:
        return busy_fraction()
    deadline = time.monotonic() + limit_s
    while True:
        b = busy_fraction(2.0)
        if b <= threshold or time.monotonic() >= deadline:
            return b
        log(f"machine {b:.0%} busy, waiting for it to settle")


def cpu_model():
    """The CPU's model name (/proc/cpuinfo); measure_wasm.py records it too."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def machine_info():
    mem_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
    gcc = sh(["g++", "--version"]).stdout.splitlines()
    return {
        "nproc": int(sh(["nproc"]).stdout.strip() or os.cpu_count() or 0),
        "cpu_model": cpu_model(),
        "memory_gib": round(mem_kb / 2**20, 1),
        "kernel": platform.release(),
        "compiler": gcc[0] if gcc else "unknown",
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "fault_ns_per_4k": {"small": fault_cost_ns(False), "huge": fault_cost_ns(True),
                            "huge_after_pause": fault_cost_ns(True, rounds=1, pause_s=PAUSE_S), "pause_s": PAUSE_S},
    }


# Seconds a virtual machine with free page reporting (virtio-balloon) leaves freed memory unused before
# handing it back to the host (2 s in Linux's page_reporting), with a margin.
PAUSE_S = 4


def fault_cost_ns(huge, mib=64, rounds=3, pause_s=0):
    """ns to fault in 4 KiB of fresh anonymous memory, small or transparent huge pages (best of
    `rounds` maps of `mib` MiB): the CLI's runs fault in about as many bytes as the document has,
    and the cost per fault differs several-fold between virtual machines. With `pause_s`, each map
    follows a pause of that many seconds, after which a VM with free page reporting has handed the
    memory freed before it back to the host, which must then back it again."""
    size, best = mib << 20, float("inf")
    for _ in range(rounds):
        time.sleep(pause_s)
        m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
        start = time.perf_counter()
        for off in range(0, size, 4096):
            m[off] = 1
        best = min(best, time.perf_counter() - start)
        m.close()
    return round(best * 1e9 / (size // 4096))


def git_info():
    head = sh(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]).stdout.strip()
    subject = sh(["git", "-C", str(REPO), "log", "-1", "--format=%s"]).stdout.strip()
    dirty = sh(["git", "-C", str(REPO), "status", "--porcelain", "--", "core", "cli", "bench", "third_party"]).stdout
    return {"head": head, "subject": subject, "uncommitted": [l[3:] for l in dirty.splitlines() if l.strip()]}


# --- build ------------------------------------------------------------------------------------


def bazel_bin():
    p = REPO / "bazel-out" / "k8-opt" / "bin"
    if p.is_dir():
        return p
    out = sh(["bazel", "info", "-c", "opt", "bazel-bin"], cwd=REPO)
    return Path(out.stdout.strip())


def build(args, work: Path):
    """Returns (paths, notes). Binaries are copied into `work`."""
    notes = {}
    if not args.no_build:
        log("bazel build -c opt //cli:shardplan //bench:gen_model //bench:round_trip")
        r = sh(["bazel", "build", "-c", "opt", "//cli:shardplan", "//bench:gen_model", "//bench:round_trip"], cwd=REPO)
        if r.returncode != 0:
            sys.exit("bazel build failed:\n" + r.stderr[-4000:])
        if not args.no_bench:
            log("bazel build -c opt //core:stages_benchmark")
            r = sh(["bazel", "build", "-c", "opt", "//core:stages_benchmark"], cwd=REPO)
            if r.returncode != 0:
                notes["bench"] = "//core:stages_benchmark did not build: " + r.stderr.strip().splitlines()[-1][-300:]
    bin_dir = bazel_bin()
    wanted = {
        "cli": args.cli or bin_dir / "cli" / "shardplan",
        "gen": args.gen or bin_dir / "bench" / "gen_model",
        "bench": args.bench or bin_dir / "core" / "stages_benchmark",
        "round_trip": bin_dir / "bench" / "round_trip",
    }
    paths = {}
    for name, src in wanted.items():
        src = Path(src)
        if not src.is_file():
            if name in ("bench", "round_trip"):
                notes.setdefault(name, f"{src} not found")
                continue
            sys.exit(f"{src} not found (build it or pass --{name})")
        if name == "bench" and (args.no_bench or "bench" in notes):
            continue
        dst = work / f"{name}-{src.name}"
        shutil.copy2(src, dst)
        # The copy must run from here (shared libraries come from /usr); else use the original.
        # The exit statuses of a binary that runs: 2 is --help's usage error, and round_trip's on
        # one CPU; the benchmark's listing must succeed.
        probe, runs = {"bench": (["--benchmark_list_tests", "--benchmark_filter=^$"], (0,)),
                       "round_trip": (["--runs", "1", "--rounds", "10"], (0, 2))}.get(name, (["--help"], (0, 2)))
        ok = sh([str(dst)] + probe).returncode in runs
        paths[name] = str(dst if ok else src)
    return paths, notes


# --- documents --------------------------------------------------------------------------------


def doc_specs(quick):
    specs = []
    for n in GENERIC_SIZES:
        specs.append({"id": f"generic-{n}", "kind": "generic", "group": "generic",
                      "label": f"generic {n:,}", "args": ["--kind", "generic", "--params", str(n)]})
    specs.append({"id": "deepseek", "kind": "deepseek", "group": "deepseek",
                  "label": "DeepSeek-V3-sized (61 layers x 256 experts)", "args": ["--kind", "deepseek"]})
    for target, v in REFERENCE_VARIANTS.items():
        specs.append({"id": f"deepseek-ref-{target}", "kind": "deepseek", "group": "reference",
                      "reference_modules": target,
                      "label": f"DeepSeek-like {v['layers']} layers x {v['experts']} experts",
                      "args": ["--kind", "deepseek", "--layers", str(v["layers"]), "--experts", str(v["experts"])]})
    specs.append({"id": "deepseek-plan", "kind": "deepseek", "group": "plan", "plan_of": "deepseek",
                  "label": "DeepSeek-V3-sized + final plan", "args": ["--kind", "deepseek", "--plan"]})
    if not quick:
        n = GENERIC_SIZES[-1]
        specs.append({"id": f"generic-{n}-plan", "kind": "generic", "group": "plan", "plan_of": f"generic-{n}",
                      "label": f"generic {n:,} + final plan",
                      "args": ["--kind", "generic", "--params", str(n), "--plan"]})
    return specs


def count_document(path):
    """Distinct modules and parameters, and the paths of named_modules/named_parameters."""
    with open(path, "rb") as f:
        d = json.load(f)
    modules = d["modules"]
    memo = {}
    stack = [(d["root"], False)]
    while stack:  # iterative post-order over the module DAG
        m, done = stack.pop()
        if m in memo:
            continue
        kids = list(modules[m].get("children", {}).values())
        if done or not kids:
            paths = 1 + sum(memo[k][0] for k in kids)
            params = len(modules[m].get("params", {}) or {}) + sum(memo[k][1] for k in kids)
            memo[m] = (paths, params)
            continue
        stack.append((m, True))
        stack.extend((k, False) for k in kids if k not in memo)
    out = {"modules": len(modules), "parameters": len(d["parameters"]),
           "module_paths": memo[d["root"]][0], "param_paths": memo[d["root"]][1]}
    del d, modules, memo
    return out


# --- CLI runs ---------------------------------------------------------------------------------

SUMMARY = re.compile(r": ok: (\d+) owners?, (\d+) owned parameter names?, (\d+) alias")


def run_cli(cli, doc, threads, tfile):
    cmd = ["/usr/bin/time", "-f", "%e %M %U %S", "-o", str(tfile), cli, "check", "--threads", str(threads), str(doc)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    wall = time.perf_counter() - t0
    last = open(tfile).read().strip().splitlines()[-1].split()
    out = r.stdout.strip().splitlines()
    summary = out[-1] if out else ""
    if r.returncode != 0 or not SUMMARY.search(summary):
        raise RuntimeError(f"shardplan check --threads {threads} {doc}: exit {r.returncode}: {summary[:300]}")
    return {"wall_s": round(wall, 4), "time_e_s": float(last[0]), "rss_kb": int(last[1]),
            "user_s": float(last[2]), "sys_s": float(last[3]), "summary": summary}


def preback(nbytes):
    """Writes `nbytes` of fresh anonymous memory (on transparent huge pages where granted) and frees it.

    On a VM with free page reporting, memory that has been free for about 2 s goes back to the host,
    and a process that gets it pays for the host's backing it again (fault_cost_ns: 7-9 us per
    4 KiB, against 0.5): the guest's own page faults and zeroing are the same either way. Run just
    before a timed run, this leaves as much backed memory free as the run will take."""
    huge = 2 << 20
    size = (nbytes + huge - 1) // huge * huge
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_HUGEPAGE)
    for off in range(0, size, 4096):
        m[off] = 1
    m.close()


def measure_doc(cli, doc, runs, tfile):
    # One untimed run per thread count first: after a pause (generating and counting the document,
    # wait_idle), a VM with free page reporting has handed the memory freed before it back to the
    # host, and the first run pays for the host's backing it again (fault_cost_ns). The warm-up
    # alone left two of five runs of the 300,000-parameter document paying for it (0.58 and 0.62 s
    # against 0.32-0.35 s, 2026-12-02): each timed run follows preback() of its peak RSS and a quarter.
    warmup = {t: run_cli(cli, doc, t, tfile) for t in (1, 2)}
    back = max(x["rss_kb"] for x in warmup.values()) * 1024 * 5 // 4
    samples = {1: [], 2: []}
    for _ in range(runs):
        for t in (1, 2):  # interleaved, so slow phases of a shared machine hit both alike
            preback(back)
            samples[t].append(run_cli(cli, doc, t, tfile))
    med = {}
    for t, s in samples.items():
        med[t] = {k: round(statistics.median(x[k] for x in s), 4) for k in ("wall_s", "time_e_s", "user_s", "sys_s")}
        med[t]["rss_kb"] = int(statistics.median(x["rss_kb"] for x in s))
        med[t]["min_wall_s"] = min(x["wall_s"] for x in s)
    m = SUMMARY.search(samples[1][0]["summary"])
    return {
        "runs": runs,
        "warmup": {str(t): {k: v for k, v in x.items() if k != "summary"} for t, x in warmup.items()},
        "prebacked_mib": round(back / 2**20),
        "samples": {str(t): [{k: v for k, v in x.items() if k != "summary"} for x in s] for t, s in samples.items()},
        "median": {str(t): v for t, v in med.items()},
        "owners": int(m.group(1)), "owned_names": int(m.group(2)), "aliases": int(m.group(3)),
    }


# --- Google Benchmark -------------------------------------------------------------------------


def largest_benchmarks(bench):
    """Names of the benchmarks on the largest model of each kind (default mesh)."""
    r = sh([bench, "--benchmark_list_tests"])
    names = r.stdout.split()
    best = {}
    for n in names:
        m = re.match(r"BM_\w+/(\w+)/(\w+):(\d+)/devices:(\d+)", n)
        if not m:
            continue
        kind, size = m.group(1), int(m.group(3))
        best.setdefault(kind, {})
        best[kind].setdefault(size, {}).setdefault(int(m.group(4)), []).append(n)
    chosen = []
    for kind, sizes in best.items():
        top = sizes[max(sizes)]
        devices = max(top, key=lambda d: len(top[d]))  # the mesh every phase was registered with
        chosen.extend(top[devices])
    return chosen


def run_benchmarks(bench, names, min_time, cpu=None, reps=1):
    """One stages_benchmark run, pinned to CPU `cpu` (taskset) unless it is None; with reps > 1 the
    median of the repetitions is kept."""
    filt = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    base = ([shutil.which("taskset"), "-c", str(cpu)] if cpu is not None else []) + [
        bench, f"--benchmark_filter={filt}", "--benchmark_format=json"]
    if reps > 1:
        base += [f"--benchmark_repetitions={reps}", "--benchmark_report_aggregates_only=true"]
    for mt in (f"{min_time}", f"{min_time}s"):
        r = sh(base + [f"--benchmark_min_time={mt}"])
        if r.returncode == 0 and r.stdout.strip().startswith("{"):
            data = json.loads(r.stdout)
            out = {}
            stddev = {}
            for b in data.get("benchmarks", []):
                if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "stddev":
                    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
                    stddev[b.get("run_name", b["name"])] = round(b["real_time"] * scale, 4)
            for b in data.get("benchmarks", []):
                if reps > 1:
                    if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "median":
                        continue
                    name = b.get("run_name", b["name"])
                elif b.get("run_type", "iteration") != "iteration":
                    continue
                else:
                    name = b["name"]
                scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
                entry = {"real_ms": round(b["real_time"] * scale, 4), "cpu_ms": round(b["cpu_time"] * scale, 4),
                         "iterations": b["iterations"], "repetitions": reps}
                for k in ("paths", "owners", "param_paths", "bytes_per_second", "items_per_second"):
                    if k in b:
                        entry[k] = b[k]
                if name in stddev:
                    entry["stddev_ms"] = stddev[name]
                if b.get("error_occurred"):
                    entry["error"] = b.get("error_message", "error")
                out[name] = entry
            ctx = data.get("context", {})
            return {"benchmarks": out, "context": {k: ctx.get(k) for k in ("num_cpus", "mhz_per_cpu", "load_avg",
                                                                             "library_build_type")}}
    raise RuntimeError("stages_benchmark failed: " + (r.stderr or r.stdout)[-500:])


def run_benchmark_groups(bench, names, min_time, reps, wait_s, rounds):
    """Each model in its own runs, pinned to one CPU (taskset, where there is one) and then on
    both, back to back, so that a noisy moment on the machine weighs on both sides of a speedup;
    with `reps` repetitions (median), models of 300,000 parameters or more (their end-to-end
    benchmark takes seconds) with HEAVY_REPETITIONS. This VM's second CPU has slow spells that
    last seconds, a whole run of a model: `rounds` runs of each (alternating 1 and 2 CPUs) are
    made and, per benchmark, the run with the median time is kept. Returns the 1-CPU and the
    2-CPU results."""
    groups = {}
    for n in names:
        m = re.match(r"BM_\w+/(\w+/\w+:\d+/devices:\d+)", n)
        groups.setdefault(m.group(1) if m else n, []).append(n)
    pin = bool(shutil.which("taskset"))
    merged = [{"benchmarks": {}, "context": None, "busy_before": {}} for _ in range(2)]
    for model, group in groups.items():
        heavy = re.match(r"generic/params:(\d+)", model) and int(re.match(r"generic/params:(\d+)", model)
                                                                      .group(1)) >= 300_000
        runs = ([], [])
        for _ in range(rounds):
            for out, cpu, found in zip(merged, (0 if pin else None, None), runs):
                out["busy_before"][model] = wait_idle(wait_s)
                r = run_benchmarks(bench, group, min_time, cpu, min(reps, HEAVY_REPETITIONS) if heavy else reps)
                found.append(r["benchmarks"])
                out["context"] = out["context"] or r["context"]
        for out, found in zip(merged, runs):
            for name in found[0]:
                entries = sorted((f[name] for f in found if name in f), key=lambda e: e["real_ms"])
                out["benchmarks"][name] = dict(entries[len(entries) // 2], rounds=[e["real_ms"] for e in entries])
    return merged[0], merged[1]


# --wait-steady's limits: the CPUs' probe times within 10% of each other, a round trip of at most
# 350 ns (between the VM's fast and slow stretches, see wait_steady).
STEADY_RATIO = 1.10
STEADY_TRIP_NS = 350

# The benchmark that compares the CPUs' speeds: a parallel phase, short, on a model built quickly.
CPU_PROBE = "BM_Collect/generic/params:100000/devices:64/real_time"


def cpu_speeds(bench, nproc):
    """The probe benchmark pinned to each CPU in turn (median of 5), in ms: a virtual machine's
    CPUs need not be equally fast, and two CPUs then cannot be twice as fast as CPU 0 alone
    (the 1-CPU runs use CPU 0). Empty without taskset or without the probe."""
    if not shutil.which("taskset"):
        return {}
    try:
        return {str(c): run_benchmarks(bench, [CPU_PROBE], 0.2, c, 5)["benchmarks"][CPU_PROBE]["real_ms"]
                for c in range(nproc)}
    except (RuntimeError, KeyError):
        return {}


def round_trip_ns(binary):
    """The median time, in ns, a cache line takes from the first CPU to the second and back
    (bench/round_trip.cc, 5 runs): on a virtual machine it changes with where the host puts the
    vCPUs, and with it every phase that passes data between threads. None on one CPU."""
    if not binary:
        return None
    r = sh([binary, "--runs", "5"])
    if r.returncode != 0:
        return None
    return round(statistics.median(json.loads(r.stdout)["round_trip_ns"]), 1)


def wait_steady(bench, round_trip_bin, nproc, limit_s, ratio=STEADY_RATIO, trip_limit_ns=STEADY_TRIP_NS,
                pause_s=20.0):
    """Waits up to limit_s seconds for the virtual machine's CPUs to be steady: the probe's times
    on the CPUs within `ratio` of each other (cpu_speeds) and a cache line's round trip at most
    trip_limit_ns (round_trip_ns). One of a VM's two vCPUs (either one) ran the probe up to 1.6
    times as slowly as the other for stretches of tens of minutes, and the round trip took
    140-240 ns at some times and 470-620 ns at others; in the slow stretches no parallel phase can
    be twice as fast. Decided on these probes alone, never on the measurements. Returns what was
    probed."""
    started = time.monotonic()
    probes = []
    while True:
        speeds = cpu_speeds(bench, nproc) if bench else {}
        trip = round_trip_ns(round_trip_bin)
        probes.append({"t_s": round(time.monotonic() - started, 1), "cpu_ms": speeds, "round_trip_ns": trip})
        steady = ((len(speeds) < 2 or max(speeds.values()) <= ratio * min(speeds.values()))
                  and (trip is None or trip <= trip_limit_ns))
        if steady or time.monotonic() - started + pause_s > limit_s:
            return {"limit_s": limit_s, "ratio": ratio, "round_trip_limit_ns": trip_limit_ns, "steady": steady,
                    "waited_s": round(time.monotonic() - started, 1), "probes": probes}
        log(f"CPUs not steady ({', '.join(f'CPU {c} {v:.2f} ms' for c, v in speeds.items())}, "
            f"round trip {trip} ns): waiting")
        time.sleep(pause_s)


def parallel_call_sites():
    """Call sites of the parallel helpers in core/**/*.cc, with the enclosing function and phase."""
    sites = []
    pat = re.compile(r"\b(ParallelFor|ParallelChunks|ParallelGather|ScanThenApply|parallel_for|parallel_invoke|parallel_reduce|task_group)\b")
    fn = re.compile(r"^[A-Za-z][^;{}()]*?\b([A-Za-z_][\w:]*)\s*\(")
    for path in sorted((REPO / "core").glob("**/*.cc")):
        name = path.relative_to(REPO / "core").as_posix()
        lines = path.read_text(errors="replace").splitlines()
        for i, line in enumerate(lines):
            if not pat.search(line) or line.lstrip().startswith("//"):
                continue
            func = "?"
            for j in range(i, -1, -1):
                m = fn.match(lines[j])
                if m and not lines[j].startswith(("namespace", "using", "struct", "class", "template", "#")):
                    func = m.group(1)
                    break
            phase = PHASE_FILES.get(name)
            if not any(s["file"] == f"core/{name}" and s["function"] == func for s in sites):
                sites.append({"file": f"core/{name}", "line": i + 1, "function": func, "phase": phase})
    return sites


def summarize_bench(one, two, sites):
    """Per model: per-phase times, ns per parameter path, speedups, the targets' aggregates."""
    # The issue's parallel phases are the checks (independent per owner or per path); parsing,
    # a two-stage pipeline with one parallel pass, is not among them (its speedup is still in
    # the per-phase table).
    parallel = sorted({s["phase"] for s in sites if s["phase"] and s["phase"] != "BM_Parse"}, key=PHASES.index)
    models = {}
    for name, b1 in one["benchmarks"].items():
        m = re.match(r"(BM_\w+)/(\w+/\w+:\d+/devices:\d+)", name)
        if not m:
            continue
        phase, model = m.groups()
        b2 = two["benchmarks"].get(name, {}) if two else {}
        entry = models.setdefault(model, {"phases": {}})
        entry["phases"][phase] = {"t1_ms": b1["real_ms"], "t2_ms": b2.get("real_ms"),
                                  "t1_stddev_ms": b1.get("stddev_ms"), "t2_stddev_ms": b2.get("stddev_ms"),
                                  "error": b1.get("error") or b2.get("error")}
        for k in ("paths", "owners", "param_paths"):
            if k in b1:
                entry[k] = int(b1[k])
    for model, e in models.items():
        pp = e.get("param_paths")
        ph = e["phases"]
        for p, v in ph.items():
            v["speedup"] = round(v["t1_ms"] / v["t2_ms"], 3) if v.get("t2_ms") else None
            v["ns_per_param_path_t1"] = round(v["t1_ms"] * 1e6 / pp, 2) if pp else None
        have = [p for p in CHECK_PHASES if p in ph and not ph[p]["error"]]
        if pp and len(have) == len(CHECK_PHASES):
            t1 = sum(ph[p]["t1_ms"] for p in have)
            e["checks_ms_t1"] = round(t1, 4)
            e["checks_ns_per_param_path_t1"] = round(t1 * 1e6 / pp, 2)
        par = [p for p in parallel if p in ph and ph[p].get("t2_ms") and not ph[p]["error"]]
        if par:
            s1 = sum(ph[p]["t1_ms"] for p in par)
            s2 = sum(ph[p]["t2_ms"] for p in par)
            e["parallel_phases"] = par
            e["parallel_t1_ms"] = round(s1, 4)
            e["parallel_t2_ms"] = round(s2, 4)
            e["parallel_speedup"] = round(s1 / s2, 3)
    return {"parallel_phases": parallel, "models": models}


# --- profiles ---------------------------------------------------------------------------------


def simplify(name):
    """`void ns::F<T>::g(int) const [lib]` -> `ns::F::g`: drop templates, arguments, return type."""
    name = re.sub(r"\s*\[[^\]]*\]\s*$", "", name.strip())  # callgrind's [binary]
    name = re.sub(r"\s*\[clone [^\]]*\]", "", name)
    m = re.match(r"^(\?\?\?|[^\s:]*[/.][^\s:]*):(.*)$", name)  # callgrind's `file:` prefix
    if m:
        name = m.group(2)
    name = name.replace("(anonymous namespace)", "{anon}").replace("operator()", "operator@")
    out, depth = [], 0
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    s = "".join(out).replace("operator@", "operator()").replace("{lambda#", "{lambda#")
    s = re.sub(r"\s+const\b", "", s)
    m = re.search(r"(\S*operator\s.*|\S+)$", s)  # drop the return type
    s = m.group(1) if m else s
    return s.replace("{anon}", "(anon)")


CG_LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.+)$")


def callgrind(cli, doc, work, tag):
    out = work / f"callgrind.{tag}.out"
    t0 = time.perf_counter()
    r = sh(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", cli, "check", "--threads", "1", str(doc)])
    if r.returncode != 0:
        raise RuntimeError("callgrind failed: " + r.stderr[-300:])
    elapsed = time.perf_counter() - t0
    res = {"seconds_under_valgrind": round(elapsed, 1)}
    for mode, flag in (("inclusive", "--inclusive=yes"), ("self", "--inclusive=no")):
        text = sh(["callgrind_annotate", flag, str(out)]).stdout
        rows = []
        for line in text.splitlines():
            m = CG_LINE.match(line)
            if m and "PROGRAM TOTALS" not in line:
                rows.append({"ir": int(m.group(1).replace(",", "")), "pct": float(m.group(2)),
                             "name": simplify(m.group(3)), "raw": m.group(3)})
        res[mode] = rows
        if mode == "inclusive":
            total = re.search(r"^\s*([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS", text, re.M)
            res["total_ir"] = int(total.group(1).replace(",", "")) if total else None
    incl = {}
    for row in res["inclusive"]:
        incl.setdefault(row["name"], row["pct"])
    res["phases"] = [{"phase": label, "function": fn, "pct": incl.get(fn)} for label, fn in PROFILE_PHASES]
    check = incl.get("shardplan::Check")
    run = incl.get("(anon)::RunCheck")
    res["cli_outside_check_pct"] = round(run - check, 2) if check is not None and run is not None else None
    out.unlink(missing_ok=True)
    return res


def engine_rows(rows, n):
    keep = []
    for r in rows:
        nm = r["name"]
        if not re.search(r"shardplan::|rapidjson::|RunCheck|absl::|^main$|malloc|free|operator new|operator delete|"
                         r"memcpy|memmove|Glob", nm):
            continue
        if nm in ("main",) or nm.startswith("tbb::"):
            continue
        keep.append(r)
        if len(keep) == n:
            break
    return keep


PERF_LINE = re.compile(r"^\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.+)$")


def perf_profile(cli, doc, work):
    data = work / "perf.data"
    # A warm-up first, as for the timed runs (measure_doc): after the callgrind runs, the first run
    # spent over half its samples in the kernel zeroing pages the host had to back again.
    sh([cli, "check", "--threads", "1", str(doc)])
    r = sh(["perf", "record", "-q", "-F", "999", "-o", str(data), cli, "check", "--threads", "1", str(doc)])
    if r.returncode != 0:
        raise RuntimeError("perf record failed: " + r.stderr[-300:])
    text = sh(["perf", "report", "-i", str(data), "--no-children", "--stdio", "--sort", "dso,symbol"]).stdout
    rows = []
    for line in text.splitlines():
        m = PERF_LINE.match(re.sub(r"(\s+-)+\s*$", "", line))  # perf pads with empty "-" columns
        if m:
            rows.append({"pct": float(m.group(1)), "dso": m.group(2), "kernel": m.group(3) == "k",
                         "name": simplify(m.group(4))})
    data.unlink(missing_ok=True)
    kernel = round(sum(r["pct"] for r in rows if r["kernel"]), 2)
    return {"self": rows[:40], "kernel_pct": kernel}


def massif(cli, doc, work):
    out = work / "massif.out"
    # The CLI's malloc is mimalloc's (a shared library): massif must replace that one.
    r = sh(["valgrind", "--tool=massif", "--soname-synonyms=somalloc=*mimalloc*", f"--massif-out-file={out}",
            "--threshold=0.5", cli, "check",
            "--threads", "1", str(doc)])
    if r.returncode != 0:
        raise RuntimeError("massif failed: " + r.stderr[-300:])
    text = out.read_text(errors="replace").splitlines()
    out.unlink(missing_ok=True)
    # Snapshots: "snapshot=N", "mem_heap_B=..", ..., "heap_tree=peak|detailed|empty", then the tree.
    snaps, cur = [], None
    for i, line in enumerate(text):
        if line.startswith("snapshot="):
            cur = {"heap": 0, "extra": 0, "tree": None}
            snaps.append(cur)
        elif cur is not None and line.startswith("mem_heap_B="):
            cur["heap"] = int(line.split("=")[1])
        elif cur is not None and line.startswith("mem_heap_extra_B="):
            cur["extra"] = int(line.split("=")[1])
        elif cur is not None and line.startswith("heap_tree="):
            cur["kind"] = line.split("=")[1]
            cur["tree_at"] = i + 1
    peak = next((s for s in snaps if s.get("kind") == "peak"), max(snaps, key=lambda s: s["heap"]))
    node = re.compile(r"^(\s*)n(\d+): (\d+) (.*)$")
    sites = []
    if "tree_at" in peak:
        # Parse the tree: each top-level child is an allocation site; name it by its first
        # engine frame below the allocation function.
        i = peak["tree_at"]
        root = node.match(text[i])
        base = len(root.group(1))
        j = i + 1
        while j < len(text) and node.match(text[j]):
            m = node.match(text[j])
            if len(m.group(1)) <= base:
                break
            if len(m.group(1)) == base + 1:
                frames, k = [m.group(4)], j + 1
                depth = len(m.group(1))
                while k < len(text) and node.match(text[k]) and len(node.match(text[k]).group(1)) > depth:
                    frames.append(node.match(text[k]).group(4))
                    depth = len(node.match(text[k]).group(1))
                    k += 1
                if frames[0].startswith("in "):  # "in N places, all below massif's threshold"
                    sites.append({"bytes": int(m.group(3)), "site": "(smaller allocation sites)", "allocator": ""})
                    j += 1
                    continue
                names = [simplify(re.sub(r"^0x[0-9A-F]+: ", "", f).split(" (in ")[0]) for f in frames]
                where = next((n for n in names if re.match(r"(shardplan::|\(anon\)::)", n)), names[0])
                what = names[0]
                sites.append({"bytes": int(m.group(3)), "site": where, "allocator": what})
            j += 1
    sites.sort(key=lambda s: -s["bytes"])
    return {"peak_heap_bytes": peak["heap"], "peak_extra_bytes": peak["extra"], "sites": sites[:12]}


def compact_profile(key, p):
    """What results.json keeps of a profile (the full lists stay in profile.txt)."""
    if "callgrind" not in key:
        return p
    out = {k: v for k, v in p.items() if k not in ("inclusive", "self")}
    out["top_inclusive"] = [{k: v for k, v in r.items() if k != "raw"} for r in engine_rows(p["inclusive"], 15)]
    out["top_self"] = [{k: v for k, v in r.items() if k != "raw"} for r in p["self"][:15]]
    return out


def write_profile_txt(profiles, path):
    lines = ["# Generated by tools/perf/measure.py; do not edit. Re-run it to refresh.", ""]
    if not profiles:
        lines.append("(no profiles in this run: --no-profile, or valgrind/perf unavailable)")
    for key, p in profiles.items():
        if "callgrind" in key:
            lines += [f"=== {key}: {p['title']} ===",
                      f"callgrind (instructions, --threads 1): {p.get('total_ir') or 0:,} Ir in total; "
                      f"{p['seconds_under_valgrind']} s under valgrind", "",
                      "phases (inclusive, % of all instructions):"]
            for ph in p["phases"]:
                pct = "  not seen" if ph["pct"] is None else f"{ph['pct']:9.2f}%"
                lines.append(f"  {ph['phase']:<15} {pct}  {ph['function']}")
            if p.get("cli_outside_check_pct") is not None:
                lines.append(f"  {'CLI: read+print':<15} {p['cli_outside_check_pct']:9.2f}%  RunCheck minus shardplan::Check")
            lines.append("  (not seen: inlined into its caller, or not run: no plan in the document)")
            lines += ["", "top engine functions, inclusive (callgrind_annotate --inclusive=yes):"]
            for r in engine_rows(p["inclusive"], 15):
                lines.append(f"  {r['ir']:>14,} {r['pct']:6.2f}%  {r['name']}")
            lines += ["", "top functions, self (callgrind_annotate):"]
            for r in p["self"][:15]:
                lines.append(f"  {r['ir']:>14,} {r['pct']:6.2f}%  {r['name']}")
            lines.append("")
        elif key == "perf":
            lines += [f"=== perf: {p['title']} ===",
                      f"perf record -F 999 (samples, self time, --threads 1); kernel share {p['kernel_pct']}%", ""]
            for r in p["self"][:25]:
                lines.append(f"  {r['pct']:6.2f}%  {'[k]' if r['kernel'] else '[.]'} {r['name']}  ({r['dso']})")
            lines.append("")
        elif key == "massif":
            lines += [f"=== massif: {p['title']} ===",
                      f"heap at its peak: {p['peak_heap_bytes'] / 2**20:.1f} MiB "
                      f"(+{p['peak_extra_bytes'] / 2**20:.1f} MiB allocator overhead); largest allocation sites:", ""]
            for s in p["sites"]:
                via = f"  (via {s['allocator']})" if s["allocator"] else ""
                lines.append(f"  {s['bytes'] / 2**20:8.1f} MiB  {s['site']}{via}")
            lines.append("")
    path.write_text("\n".join(lines) + "\n")


# --- derived numbers --------------------------------------------------------------------------


def derive(docs, bench):
    by_id = {d["id"]: d for d in docs}
    t = lambda d, th: d["median"][str(th)]["wall_s"]  # noqa: E731
    out = {}
    # Linear scaling: every pair of generic sizes 10x apart.
    decades = []
    for n in GENERIC_SIZES:
        a, b = by_id.get(f"generic-{n}"), by_id.get(f"generic-{n * 10}")
        if a and b:
            decades.append({"from": n, "to": n * 10,
                            "ratio_t1": round(t(b, 1) / t(a, 1), 3), "ratio_t2": round(t(b, 2) / t(a, 2), 3)})
    out["decades"] = decades
    for d in docs:
        d["speedup_2_threads"] = round(t(d, 1) / t(d, 2), 3)
        d["rss_over_doc"] = round(d["median"]["1"]["rss_kb"] * 1024 / d["doc_bytes"], 3)
        d["rss_over_doc_t2"] = round(d["median"]["2"]["rss_kb"] * 1024 / d["doc_bytes"], 3)
    ref = []
    for modules, secs in REFERENCE:
        d = by_id.get(f"deepseek-ref-{modules}")
        if d:
            ref.append({"reference_modules": modules, "reference_s": secs, "doc": d["id"],
                        "modules": d["module_paths"], "t1_s": t(d, 1), "t2_s": t(d, 2),
                        "speedup_t1": round(secs / t(d, 1), 1), "speedup_t2": round(secs / t(d, 2), 1)})
    out["reference"] = ref

    targets = []

    def target(key, what, measured, limit, unit, better="lower", note=""):
        if measured is None:
            targets.append({"key": key, "what": what, "measured": None, "limit": limit, "unit": unit,
                            "met": None, "factor": None, "note": note})
            return
        met = measured <= limit if better == "lower" else measured >= limit
        factor = measured / limit if better == "lower" else limit / measured
        targets.append({"key": key, "what": what, "measured": measured, "limit": limit, "unit": unit,
                        "better": better, "met": met, "factor": round(factor, 3), "note": note})

    models = (bench or {}).get("summary", {}).get("models", {})
    gen_models = sorted((m for m in models if m.startswith("generic/")), key=lambda m: int(re.search(r":(\d+)", m)
                                                                                           .group(1)))
    for m in ([gen_models[-1]] if gen_models else []) + [m for m in models if m.startswith("deepseek/")]:
        e = models[m]
        target("checks_ns_per_param_path", f"claims and checks, 1 thread, in-memory `{m}`",
               e.get("checks_ns_per_param_path_t1"), TARGETS["checks_ns_per_param_path"], "ns/parameter path")
    if not models:
        target("checks_ns_per_param_path", "claims and checks, 1 thread, in-memory model", None,
               TARGETS["checks_ns_per_param_path"], "ns/parameter path", note="stages_benchmark unavailable")
    ds = by_id.get("deepseek")
    if ds:
        best = min(t(ds, 1), t(ds, 2))
        target("deepseek_cli_s", "end-to-end CLI, DeepSeek-V3-sized document, 2 threads", t(ds, 2),
               TARGETS["deepseek_cli_s"], "s")
        target("deepseek_vs_reference", "speedup over the reference's 5.6 s (best thread count)",
               round(REFERENCE_DEEPSEEK_S / best, 1), TARGETS["deepseek_vs_reference"], "x", better="higher")
    mil = by_id.get(f"generic-{GENERIC_SIZES[-1]}")
    if mil:
        target("million_cli_s", "end-to-end CLI, 1,000,000-parameter document, 2 threads", t(mil, 2),
               TARGETS["million_cli_s"], "s")
        target("million_rss_over_doc", "peak RSS / document size, 1,000,000 parameters, 2 threads",
               mil["rss_over_doc_t2"], TARGETS["million_rss_over_doc"], "x")
    for dec in decades:
        target("decade_ratio", f"time({dec['to']:,}) / time({dec['from']:,}), 1 thread", dec["ratio_t1"],
               TARGETS["decade_ratio"], "x")
    for m in ([gen_models[-1]] if gen_models else []) + [m for m in models if m.startswith("deepseek/")]:
        e = models[m]
        target("parallel_speedup", f"parallel phases ({', '.join(p[3:] for p in e.get('parallel_phases', []))}), "
               f"1 -> 2 threads, `{m}`", e.get("parallel_speedup"), TARGETS["parallel_speedup"], "x",
               better="higher")
    if not models:
        target("parallel_speedup", "parallel phases, 1 -> 2 threads", None, TARGETS["parallel_speedup"], "x",
               better="higher", note="stages_benchmark unavailable")
    out["targets"] = targets
    return out


# --- main -------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="1 run (not 3) of the 1M-parameter document, no 1M document with a plan, shorter benchmarks")
    ap.add_argument("--runs", type=int, default=3, help="runs per document and thread count (median is reported)")
    ap.add_argument("--cli", help="shardplan binary (default: bazel build -c opt //cli:shardplan)")
    ap.add_argument("--gen", help="gen_model binary (default: bazel build -c opt //bench:gen_model)")
    ap.add_argument("--bench", help="stages_benchmark binary (default: bazel build -c opt //core:stages_benchmark)")
    ap.add_argument("--no-build", action="store_true", help="do not run bazel; use the binaries already built")
    ap.add_argument("--no-bench", action="store_true", help="skip the Google Benchmark suite")
    ap.add_argument("--no-profile", action="store_true", help="skip callgrind, perf and massif")
    ap.add_argument("--wait-idle", type=float, default=0, metavar="S",
                    help="before each document, wait up to S seconds for the machine to be idle")
    ap.add_argument("--wait-steady", type=float, default=0, metavar="S",
                    help="before the documents and before the benchmarks, wait up to S seconds for the CPUs "
                         f"to run a probe within {STEADY_RATIO:.2f}x of each other and pass a cache line back "
                         f"and forth in at most {STEADY_TRIP_NS} ns (recorded in results.json)")
    ap.add_argument("--keep", metavar="DIR", help="generate the documents into DIR and keep them")
    ap.add_argument("--out-dir", default=str(HERE), help="where results.json, profile.txt and the SVG go")
    ap.add_argument("--no-render", action="store_true", help="do not write docs/performance.md")
    args = ap.parse_args()

    started = time.monotonic()
    out_dir = Path(args.out_dir)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="shardplan-perf-"))
    work.mkdir(parents=True, exist_ok=True)
    tfile = work / "time.txt"
    try:
        machine = machine_info()
        machine["busy_at_start"] = busy_fraction()
        paths, notes = build(args, work)
        log("binaries:", paths)

        steady = {}
        if args.wait_steady > 0:
            steady["documents"] = wait_steady(paths.get("bench"), paths.get("round_trip"), machine["nproc"],
                                              args.wait_steady)
        docs, counts = [], {}
        for spec in doc_specs(args.quick):
            path = work / f"{spec['id']}.json"
            r = sh([paths["gen"], *spec["args"], "--out", str(path)])
            if r.returncode != 0:
                raise RuntimeError(f"gen_model {' '.join(spec['args'])}: {r.stderr.strip()[:300]}")
            c = counts.get(spec.get("plan_of", spec["id"]))  # a plan changes neither modules nor parameters
            if c is None:
                c = count_document(path)
            counts[spec["id"]] = c
            runs = 1 if (args.quick and spec["id"].startswith(f"generic-{GENERIC_SIZES[-1]}")) else args.runs
            busy = wait_idle(args.wait_idle)
            size = path.stat().st_size
            log(f"{spec['id']}: {size / 1e6:.1f} MB, {c['module_paths']:,} module paths, "
                f"{c['param_paths']:,} parameter paths; {runs} run(s) x threads 1,2 (machine {busy:.0%} busy)")
            m = measure_doc(paths["cli"], path, runs, tfile)
            entry = {k: v for k, v in spec.items() if k != "args"}
            entry.update({"gen_args": " ".join(spec["args"]), **c, "doc_bytes": size, "busy_before": busy, **m})
            docs.append(entry)
            log(f"  1 thread {m['median']['1']['wall_s']:.3f} s {m['median']['1']['rss_kb'] / 1024:.0f} MB, "
                f"2 threads {m['median']['2']['wall_s']:.3f} s")
            if not (args.keep or spec["id"] in ("deepseek", f"generic-{GENERIC_SIZES[-1]}", "generic-100000",
                                               "generic-10000")):
                path.unlink()

        bench = None
        if "bench" in paths:
            log("stages_benchmark: listing, then per model 1 CPU (taskset -c 0) and 2 CPUs")
            try:
                names = largest_benchmarks(paths["bench"])
                if args.wait_steady > 0:
                    # Its last probe is the one before the benchmarks.
                    steady["benchmarks"] = wait_steady(paths["bench"], paths.get("round_trip"), machine["nproc"],
                                                       args.wait_steady)
                    last = steady["benchmarks"]["probes"][-1]
                    speeds_before, trip_before = last["cpu_ms"], last["round_trip_ns"]
                else:
                    speeds_before = cpu_speeds(paths["bench"], machine["nproc"])
                    trip_before = round_trip_ns(paths.get("round_trip"))
                min_time = 0.05 if args.quick else 0.2
                reps = 3 if args.quick else 5
                rounds = 1 if args.quick else BENCHMARK_ROUNDS
                one, two = run_benchmark_groups(paths["bench"], names, min_time, reps, args.wait_idle, rounds)
                speeds = {"probe": CPU_PROBE, "before": speeds_before,
                          "after": cpu_speeds(paths["bench"], machine["nproc"]),
                          "round_trip_ns": {"before": trip_before, "after": round_trip_ns(paths.get("round_trip"))}}
                sites = parallel_call_sites()
                bench = {"names": names, "min_time_s": min_time, "repetitions": reps, "rounds": rounds,
                         "heavy_repetitions": HEAVY_REPETITIONS, "one_cpu": one, "two_cpus": two,
                         "pinned_with_taskset": bool(shutil.which("taskset")), "cpu_speed_ms": speeds,
                         "parallel_call_sites": sites, "summary": summarize_bench(one, two, sites)}
            except RuntimeError as e:
                notes["bench"] = str(e)
                log("stages_benchmark:", e)

        profiles = {}
        if not args.no_profile:
            ds_doc = work / "deepseek.json"
            mid = work / "generic-100000.json"
            small = work / "generic-10000.json"
            big = work / f"generic-{GENERIC_SIZES[-1]}.json"
            jobs = [
                ("callgrind-deepseek", "valgrind", lambda: callgrind(paths["cli"], ds_doc, work, "deepseek"),
                 f"DeepSeek-V3-sized document ({ds_doc.stat().st_size / 1e6:.1f} MB), --threads 1"),
                ("callgrind-generic-10000", "valgrind", lambda: callgrind(paths["cli"], small, work, "small"),
                 f"generic 10,000-parameter document ({small.stat().st_size / 1e6:.1f} MB), --threads 1"),
                ("callgrind-generic-100000", "valgrind", lambda: callgrind(paths["cli"], mid, work, "generic"),
                 f"generic 100,000-parameter document ({mid.stat().st_size / 1e6:.1f} MB), --threads 1"),
                ("perf", "perf", lambda: perf_profile(paths["cli"], big, work),
                 f"generic {GENERIC_SIZES[-1]:,}-parameter document ({big.stat().st_size / 1e6:.0f} MB), "
                 f"--threads 1"),
                ("massif", "valgrind", lambda: massif(paths["cli"], mid, work),
                 f"generic 100,000-parameter document ({mid.stat().st_size / 1e6:.1f} MB), --threads 1"),
            ]
            for key, tool, fn, title in jobs:
                if not shutil.which(tool):
                    notes[key] = f"{tool} not installed"
                    continue
                log("profile:", key)
                try:
                    p = fn()
                    p["title"] = title
                    profiles[key] = p
                except RuntimeError as e:
                    notes[key] = str(e)
                    log(key, e)
        write_profile_txt(profiles, out_dir / "profile.txt")  # with --no-profile: an empty, current one

        machine["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        results = {
            "schema": "shardplan.perf.v1",
            "command": shlex.join(["python3", "tools/perf/measure.py", *sys.argv[1:]]),
            "quick": args.quick,
            "runs": args.runs,
            "machine": machine,
            "git": git_info(),
            "binaries": {k: os.path.basename(v) for k, v in paths.items()},
            "reference": [{"modules": m, "seconds": s} for m, s in REFERENCE],
            "reference_variants": {str(k): v for k, v in REFERENCE_VARIANTS.items()},
            "targets_def": TARGETS,
            "documents": docs,
            "benchmarks": bench,
            "profiles": {k: compact_profile(k, v) for k, v in profiles.items()},
            "notes": notes,
            "steady": steady,
        }
        results["derived"] = derive(docs, bench)
        results["elapsed_s"] = round(time.monotonic() - started, 1)
        for d in docs:
            for r in d.get("samples", {}).values():
                for x in r:
                    x.pop("summary", None)
        (out_dir / "results.json").write_text(json.dumps(results, indent=1) + "\n")
        plot.write_svg(results, out_dir / "time_memory.svg")
        if not args.no_render:
            render.render(results, out_dir / "profile.txt", REPO / "docs" / "performance.md")
        log(f"done in {results['elapsed_s']:.0f} s: {out_dir / 'results.json'}, {out_dir / 'time_memory.svg'}"
            + ("" if args.no_render else ", docs/performance.md"))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

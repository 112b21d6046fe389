#!/usr/bin/env python3
"""Wall time of core_benchmark builds side by side: interleaved runs, the
best and the median of each benchmark per build.

On a noisy virtual machine one run of a benchmark can take a third longer
than the next, for the same binary. Noise only adds time, so the best of
many runs interleaved between the builds (A B, B A, A B, ...) is the
steadiest figure to compare; the median is printed next to it. Where the
two disagree in direction the difference is under the noise. Instruction
counts (instructions.py) show the work a change removes; only timings show
memory stalls and mispredicted branches.

    python3 tools/perf/ab.py OLD_BENCH NEW_BENCH
    python3 tools/perf/ab.py --cpus 2 --rounds 12 --filter '(Collect|Claims|PlanCheck)/deepseek/' OLD NEW

Each run is one process, pinned with taskset to CPUs 0 to N-1 (`--cpus N`,
default 1: one thread).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

DEFAULT_FILTER = "^BM_(Collect|Nesting|OwnerChecks|Claims|PlanCheck)/generic/params:1000000/"
UNITS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def run(bench, pattern, cpus, min_time):
    """{benchmark name: milliseconds per call} of one run of `bench`."""
    cmd = [bench, f"--benchmark_filter={pattern}", "--benchmark_format=json",
           f"--benchmark_min_time={min_time}"]
    cmd = ["taskset", "-c", f"0-{cpus - 1}"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{bench} exited with {r.returncode}: {r.stderr[-400:]}")
    if not r.stdout.strip():  # google benchmark prints nothing when no benchmark matches
        raise RuntimeError(f"{bench}: no benchmark matches {pattern!r}")
    times = {}
    for b in json.loads(r.stdout)["benchmarks"]:
        if b.get("error_occurred"):
            raise RuntimeError(f"{bench} {b['name']}: {b.get('error_message', 'error')}")
        if b.get("run_type") == "aggregate":
            continue
        times[b["name"].removesuffix("/real_time")] = b["real_time"] * UNITS[b["time_unit"]]
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="+", help="core_benchmark binaries; the first is the baseline")
    ap.add_argument("--filter", default=DEFAULT_FILTER, help="--benchmark_filter (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=8, help="runs of each binary (default: %(default)s)")
    ap.add_argument("--cpus", type=int, default=1, help="run on CPUs 0 to N-1 (default: %(default)s)")
    ap.add_argument("--min-time", type=float, default=0.2, help="--benchmark_min_time, s (default: %(default)s)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if not 1 <= args.cpus <= (os.cpu_count() or 1):
        ap.error(f"--cpus must be from 1 to {os.cpu_count()}")
    for b in args.bench:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ap.error(f"not an executable file: {b}")
    binaries = [os.path.abspath(b) for b in args.bench]  # "cb" would be looked up on PATH

    times = [{} for _ in args.bench]  # per binary: name -> [ms per round]
    try:
        for r in range(args.rounds):
            order = range(len(args.bench)) if r % 2 == 0 else reversed(range(len(args.bench)))
            for i in order:
                for name, ms in run(binaries[i], args.filter, args.cpus, args.min_time).items():
                    times[i].setdefault(name, []).append(ms)
    except (RuntimeError, OSError, ValueError) as e:
        sys.exit(f"ab.py: {e}")

    labels = [f"[{i}]" for i in range(len(args.bench))]
    for label, b in zip(labels, args.bench):
        print(f"{label} {b}")
    print(f"\nms per call, {args.rounds} interleaved runs each, {args.cpus} CPU(s): best (median)")
    names = list(times[0])
    width = max(len(n) for n in names + ["sum"])
    print(f"{'benchmark':{width}s}" + "".join(f" {label:>19s}" for label in labels)
          + "".join(f" {label + '/[0]':>14s}" for label in labels[1:]))
    best_sum = [0.0] * len(args.bench)
    median_sum = [0.0] * len(args.bench)
    rows = []
    for name in names:
        best = [min(t.get(name, [float("nan")])) for t in times]
        median = [statistics.median(t.get(name, [float("nan")])) for t in times]
        for i in range(len(args.bench)):
            best_sum[i] += best[i]
            median_sum[i] += median[i]
        rows.append((name, best, median))
    rows.append(("sum", best_sum, median_sum))
    for name, best, median in rows:
        line = f"{name:{width}s}" + "".join(f" {b:9.3f} ({m:8.3f})" for b, m in zip(best, median))
        line += "".join(f" {b / best[0]:5.3f} ({m / median[0]:5.3f})" for b, m in zip(best[1:], median[1:]))
        print(line)


if __name__ == "__main__":
    main()

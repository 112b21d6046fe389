#!/usr/bin/env python3
"""Instructions per call of each check phase, counted by callgrind, for one
or more stages_benchmark binaries side by side.

On a virtual machine whose timings move by tens of percent from run to run,
an instruction count is the same on every run (to a fraction of a percent:
abseil's hash tables are seeded per process): it shows what a change does
to the work, though not to memory stalls, and a large memset or memcpy
counts each of its `rep` iterations. Each phase's benchmark runs twice
(--benchmark_repetitions=2, one iteration each under valgrind); counting
starts afresh at each entry of the benchmark function, so only the second
call is counted, after the model was built and the caches filled, and only
inside the phase's engine function (BM_Claims collects its owners outside
AssignParameters).

    python3 tools/perf/instructions.py OLD_BENCH NEW_BENCH
    python3 tools/perf/instructions.py --model deepseek bazel-bin/core/stages_benchmark

Needs valgrind (Debian's `valgrind`).
"""

import argparse
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Benchmark phase -> the engine function whose calls it times.
PHASES = {
    "Collect": "CollectOwners",
    "Nesting": "CheckNesting",
    "OwnerChecks": "CheckOwners",
    "Claims": "AssignParameters",
    "PlanCheck": "ValidatePlan",
}


def count(bench, phase, model, out, cpus):
    """Instructions of the second call of the phase's engine function, on a
    CPU of its own taken from `cpus` (one thread: all of a phase's work is
    then on the counted stack)."""
    # Collection toggles at each entry of a function the patterns match: the
    # phase's lambdas (`shardplan::ValidatePlan(...)::{lambda...}::operator()
    # (...) const`, where most of its work runs) must not match, or they
    # would toggle it off. A pattern matches a whole name, so these match
    # the function itself (and a GCC clone of it), ending in its ')'.
    fn = PHASES[phase]
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           f"--toggle-collect=shardplan::{fn}(*)", f"--toggle-collect=shardplan::{fn}(*) [clone *]",
           f"--zero-before=shardplan::bench::(anonymous namespace)::BM_{phase}*",
           bench, f"--benchmark_filter=^BM_{phase}/{model}/", "--benchmark_min_time=0.000001",
           "--benchmark_repetitions=2"]
    cpu = cpus.get()
    try:
        r = subprocess.run(["taskset", "-c", str(cpu)] + cmd, capture_output=True, text=True)
    finally:
        cpus.put(cpu)
    if r.returncode != 0 or not out.exists():
        raise RuntimeError(f"{bench} {phase}: valgrind failed: {r.stderr[-400:]}")
    if "ERROR OCCURRED" in r.stdout:
        raise RuntimeError(f"{bench} {phase}: the benchmark reported an error:\n{r.stdout[-400:]}")
    m = re.search(r"^summary: (\d+)$", out.read_text(), re.M)
    if not m or int(m.group(1)) == 0:
        raise RuntimeError(f"{bench} {phase}: no benchmark matched ^BM_{phase}/{model}/")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", nargs="+", help="stages_benchmark binaries (the first is the base of the ratios)")
    ap.add_argument("--model", default="generic/params:100000",
                    help="the benchmarks' model, as in their names (default: generic/params:100000)")
    ap.add_argument("--phases", default=",".join(PHASES), help="comma-separated (default: all five)")
    args = ap.parse_args()
    for tool in ("valgrind", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"instructions.py: {tool} is not installed")
    phases = [p for p in args.phases.split(",") if p]
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        sys.exit(f"instructions.py: unknown phase(s) {', '.join(unknown)}; known: {', '.join(PHASES)}")
    benches = [str(Path(b).resolve()) for b in args.bench]
    cpus = queue.Queue()
    for cpu in sorted(os.sched_getaffinity(0)):
        cpus.put(cpu)
    with tempfile.TemporaryDirectory() as work, ThreadPoolExecutor(cpus.qsize()) as pool:
        jobs = {(b, p): pool.submit(count, b, p, args.model, Path(work) / f"{i}.out", cpus)
                for i, (b, p) in enumerate((b, p) for b in benches for p in phases)}
        try:
            counts = {k: job.result() for k, job in jobs.items()}
        except RuntimeError as e:
            pool.shutdown(cancel_futures=True)  # the runs not started yet
            sys.exit(f"instructions.py: {e}")
    names = [f"[{i}]" for i in range(len(benches))]
    for name, b in zip(names, args.bench):
        print(f"{name} {b}")
    print(f"\ninstructions per call, {args.model}")
    head = f"{'phase':<12}" + "".join(f"{n:>14}" for n in names)
    head += "".join(f"{n + '/[0]':>10}" for n in names[1:])
    print(head)
    rows = phases + ["sum"]
    for p in rows:
        vals = [sum(counts[(b, q)] for q in phases) if p == "sum" else counts[(b, p)] for b in benches]
        line = f"{p:<12}" + "".join(f"{v:>14,}" for v in vals)
        line += "".join(f"{v / vals[0]:>10.3f}" for v in vals[1:])
        print(line)


if __name__ == "__main__":
    main()

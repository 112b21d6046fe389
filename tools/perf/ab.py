#!/usr/bin/env python3
"""Wall time of builds side by side: interleaved runs, the best and the
median per build, of each stages_benchmark benchmark, or (with --docs) of
the CLI end to end on documents, with its peak memory.

On a noisy virtual machine one run of a benchmark can take a third longer
than the next, for the same binary. Noise only adds time, so the best of
many runs interleaved between the builds (A B, B A, A B, ...) is the
steadiest figure to compare; the median is printed next to it. Where the
two disagree in direction the difference is under the noise. Instruction
counts (instructions.py) show the work a change removes; only timings show
memory stalls and mispredicted branches.

    python3 tools/perf/ab.py OLD_BENCH NEW_BENCH
    python3 tools/perf/ab.py --all-cpus --rounds 12 --filter '(Collect|Claims|PlanCheck)/deepseek/' OLD NEW
    python3 tools/perf/ab.py --docs ds.json g1m.json --args 'check --format json' OLD_CLI NEW_CLI

Each benchmark run is one process, pinned to CPU 0 (one thread), or on
every CPU with --all-cpus, run and read as measure.py runs its benchmarks.
Each CLI run is one process with the CLI's own thread default (all cores)
unless --args says otherwise; its output goes to /dev/null, and its peak
RSS is /usr/bin/time's. After one untimed run of each, every timed run
follows measure.py's preback of the largest peak RSS and a quarter, as
measure.py's own runs do.
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import measure

DEFAULT_FILTER = "^BM_(Collect|Nesting|OwnerChecks|Claims|PlanCheck)/generic/params:1000000/"


def matching(bench, pattern):
    """The names of `bench`'s benchmarks that `pattern` selects."""
    r = measure.sh([bench, "--benchmark_list_tests", f"--benchmark_filter={pattern}"])
    names = r.stdout.split()
    if r.returncode != 0 or not names:
        raise RuntimeError(f"{bench}: no benchmark matches {pattern!r}")
    return names


def run(bench, names, all_cpus, min_time):
    """{benchmark name: milliseconds per call} of one run of `bench`."""
    times = {}
    for name, entry in measure.run_benchmarks(bench, names, min_time, None if all_cpus else 0)["benchmarks"].items():
        if "error" in entry:
            raise RuntimeError(f"{bench} {name}: {entry['error']}")
        times[name.removesuffix("/real_time")] = entry["real_ms"]
    return times


def run_cli(cli, args, doc, tfile):
    """(seconds of wall time, peak RSS in KiB) of one CLI run on `doc`."""
    cmd = ["/usr/bin/time", "-f", "%M", "-o", tfile, cli, *args, doc]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):  # 1: the document has errors, which a comparison may want
        raise RuntimeError(f"{cli} {' '.join(args)} {doc}: exit {r.returncode}: {r.stderr[-300:]}")
    return wall, int(open(tfile).read().strip().splitlines()[-1])


def compare_cli(args):
    """Interleaved CLI runs of every binary on every document: best and median wall time, median peak RSS."""
    cli_args = shlex.split(args.args)
    clis = [os.path.abspath(c) for c in args.bench]
    walls = {(c, d): [] for c in range(len(clis)) for d in args.docs}
    rss = {(c, d): [] for c in range(len(clis)) for d in args.docs}
    with tempfile.NamedTemporaryFile() as tfile:
        # One untimed run of each binary on each document sizes the preback before every timed
        # run (measure.preback says why).
        back = {d: max(run_cli(c, cli_args, d, tfile.name)[1] for c in clis) * 1024 * 5 // 4 for d in args.docs}
        for r in range(args.rounds):
            order = range(len(clis)) if r % 2 == 0 else reversed(range(len(clis)))
            for c in order:
                for d in args.docs:
                    measure.preback(back[d])
                    w, m = run_cli(clis[c], cli_args, d, tfile.name)
                    walls[(c, d)].append(w)
                    rss[(c, d)].append(m)
    labels = [f"[{i}]" for i in range(len(clis))]
    for label, c in zip(labels, args.bench):
        print(f"{label} {c}")
    print(f"\nshardplan {args.args} DOC, {args.rounds} interleaved runs each, {os.cpu_count()} CPU(s):"
          f" seconds best (median), peak RSS MiB (median)")
    width = max(len(os.path.basename(d)) for d in args.docs)
    for d in args.docs:
        best = [min(walls[(c, d)]) for c in range(len(clis))]
        med = [statistics.median(walls[(c, d)]) for c in range(len(clis))]
        mem = [statistics.median(rss[(c, d)]) / 1024 for c in range(len(clis))]
        line = f"{os.path.basename(d):{width}s}" + "".join(
            f"  {b:7.3f} ({m:7.3f}) {x:7.0f}" for b, m, x in zip(best, med, mem))
        line += "".join(f"  {b / best[0]:5.3f} ({m / med[0]:5.3f})" for b, m in zip(best[1:], med[1:]))
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="+", help="stages_benchmark binaries, or CLIs with --docs; the first is the baseline")
    ap.add_argument("--docs", nargs="+", help="time the CLIs end to end on these documents")
    ap.add_argument("--args", default="check", help="the CLI's arguments before the document, with --docs (default: %(default)s)")
    ap.add_argument("--filter", default=DEFAULT_FILTER, help="--benchmark_filter (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=8, help="runs of each binary (default: %(default)s)")
    ap.add_argument("--all-cpus", action="store_true", help="run on every CPU (default: pinned to CPU 0)")
    ap.add_argument("--min-time", type=float, default=0.2, help="--benchmark_min_time, s (default: %(default)s)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    for b in args.bench:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ap.error(f"not an executable file: {b}")
    if args.docs:
        try:
            compare_cli(args)
        except (RuntimeError, OSError) as e:
            sys.exit(f"ab.py: {e}")
        return
    binaries = [os.path.abspath(b) for b in args.bench]  # "cb" would be looked up on PATH

    times = [{} for _ in args.bench]  # per binary: name -> [ms per round]
    try:
        wanted = matching(binaries[0], args.filter)
        for r in range(args.rounds):
            order = range(len(args.bench)) if r % 2 == 0 else reversed(range(len(args.bench)))
            for i in order:
                for name, ms in run(binaries[i], wanted, args.all_cpus, args.min_time).items():
                    times[i].setdefault(name, []).append(ms)
    except (RuntimeError, OSError, ValueError) as e:
        sys.exit(f"ab.py: {e}")
    names = list(times[0])
    for b, t in zip(args.bench[1:], times[1:]):
        if missing := [n for n in names if n not in t]:
            sys.exit(f"ab.py: {b} has no {', '.join(missing)}")

    labels = [f"[{i}]" for i in range(len(args.bench))]
    for label, b in zip(labels, args.bench):
        print(f"{label} {b}")
    cpus = os.cpu_count() if args.all_cpus else 1
    print(f"\nms per call, {args.rounds} interleaved runs each, {cpus} CPU(s): best (median)")
    width = max(len(n) for n in names + ["sum"])
    print(f"{'benchmark':{width}s}" + "".join(f" {label:>19s}" for label in labels)
          + "".join(f" {label + '/[0]':>14s}" for label in labels[1:]))
    rows = [(name, [min(t[name]) for t in times], [statistics.median(t[name]) for t in times]) for name in names]
    rows.append(("sum", *([sum(col) for col in zip(*(r[k] for r in rows))] for k in (1, 2))))
    for name, best, median in rows:
        line = f"{name:{width}s}" + "".join(f" {b:9.3f} ({m:8.3f})" for b, m in zip(best, median))
        line += "".join(f" {b / best[0]:5.3f} ({m / median[0]:5.3f})" for b, m in zip(best[1:], median[1:]))
        print(line)


if __name__ == "__main__":
    main()

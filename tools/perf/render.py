#!/usr/bin/env python3
"""Writes docs/performance.md from tools/perf/results.json and tools/perf/profile.txt.

    python3 tools/perf/render.py [results.json [profile.txt [out.md]]]

measure.py calls render() at the end of every run; run this alone to re-render after editing the
template below. Every number on the page comes from results.json (or profile.txt): prose that
depends on a number is a template, so the page stays true after a re-run.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

BUSY = 0.25  # share of the CPUs busy with other work before a measurement that we call "shared"


def ms(s):
    """Seconds -> a short human string."""
    if s is None:
        return "n/a"
    if s >= 10:
        return f"{s:.1f} s"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 0.1:
        return f"{s * 1e3:.0f} ms"
    if s >= 0.01:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e3:.2f} ms"


def mb(b):
    return f"{b / 1e6:.1f}" if b < 1e8 else f"{b / 1e6:.0f}"


def num(v):
    return f"{v:,}"


def pct(v):
    return "n/a" if v is None else f"{v:.1f}%"


def with_sd(v, sd):
    """A benchmark time in ms, with the standard deviation of its repetitions when there were any."""
    return f"{v:,.2f}" + (f" ± {sd:,.2f}" if sd is not None else "")


def section(profile_text, key):
    """The block of profile.txt under `=== key: ... ===` (without the header)."""
    m = re.search(rf"^=== {re.escape(key)}: .*?===\n(.*?)(?=^=== |\Z)", profile_text, re.M | re.S)
    return m.group(1).rstrip() if m else None


def phase_label(p):
    return p[3:] if p.startswith("BM_") else p


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def margin(t):
    """How far a met target is inside its limit, as a factor of at least 1."""
    lim, val = t["limit"], t["measured"]
    return (lim / val if val else float("inf")) if t.get("better", "lower") == "lower" else val / lim


def verdict(t):
    if t["met"] is None:
        return "not measured", t.get("note") or ""
    lim, val = t["limit"], t["measured"]
    if t.get("better", "lower") == "lower":
        if t["met"]:
            return "**met**", f"{margin(t):.2f}x headroom" if val else ""
        return "**missed**", f"{val / lim:.2f}x over the limit"
    if t["met"]:
        return "**met**", f"{margin(t):.2f}x the minimum"
    return "**missed**", f"reaches {val / lim:.0%} of the minimum ({lim / val:.2f}x short)"


CLOSE = 1.05  # a target met by less than this factor is discussed with the missed ones


def cold_note(doc):
    """Where runs of `doc` still paid for memory the host had taken back (over 1.4x its fastest 1-thread
    run): how many, and their times."""
    runs = (doc.get("samples") or {}).get("1") or []
    if not runs:
        return ""
    best = min(x["wall_s"] for x in runs)
    slow = [x for x in runs if x["wall_s"] > 1.4 * best]
    if not slow:
        return ""
    return (f"; it does not always: in this run {len(slow)} of the {len(runs)} 1-thread runs of the "
            f"{doc['label']}-parameter document still took "
            + ", ".join(f"{x['wall_s']:.2f} s ({x['sys_s']:.2f} s system)" for x in slow)
            + f", against {best:.2f} s at best")


def fmt_val(t, v):
    if v is None:
        return "n/a"
    if t["unit"] == "s":
        return ms(v)
    if t["unit"] == "x":
        return f"{v:,.2f}x" if v < 100 else f"{v:,.0f}x"
    return f"{v:,.1f} {t['unit']}"


def cpu_bound(speeds):
    """The most a perfectly parallel phase can gain on all CPUs over CPU 0 alone, from each CPU's
    time on the probe benchmark: 1 + t0/t1 + ... (2.0 for two equal CPUs)."""
    if not speeds or "0" not in speeds:
        return None
    return sum(speeds["0"] / v for v in speeds.values())


def round_trip_sentence(speeds):
    """The cache line's round trip between two CPUs, before and after the benchmarks, as a sentence
    ("" when the run did not measure it)."""
    trip = speeds.get("round_trip_ns") or {}
    if not (trip.get("before") and trip.get("after")):
        return ""
    return (f" A cache line went from one CPU to the other and back in {trip['before']:.0f} ns before the "
            f"benchmarks and {trip['after']:.0f} ns after (`//bench:round_trip`, median of 5 runs).")


def steady_sentence(steady):
    """What --wait-steady found before the documents and before the benchmarks, as a sentence ("" when
    the run did not wait)."""
    parts = []
    for key, label in (("documents", "the CLI runs"), ("benchmarks", "the benchmarks")):
        s = (steady or {}).get(key)
        if not s:
            continue
        last = s["probes"][-1]
        state = ", ".join(f"CPU {c} {v:.2f} ms" for c, v in last["cpu_ms"].items())
        if last.get("round_trip_ns"):
            state += f", round trip {last['round_trip_ns']:.0f} ns"
        n = len(s["probes"])
        if s["steady"] and n == 1:
            how = "steady at once"
        elif s["steady"]:
            how = f"steady after {s['waited_s']:.0f} s ({n} probes)"
        else:
            how = f"still not steady after {s['waited_s']:.0f} s ({n} probes), and the run went on"
        parts.append(f"before {label}, {how} ({state})")
    if not parts:
        return ""
    s0 = next(v for v in steady.values() if v)
    return (f" The run first waited for the CPUs to be steady (`--wait-steady {s0['limit_s']:g}`: the probe "
            f"within {s0['ratio']:.2f}x on every CPU, a round trip of at most {s0['round_trip_limit_ns']} ns; "
            "decided on those probes alone): " + "; ".join(parts) + ".")


def render(results, profile_path, out_path):
    R = results
    prof_text = Path(profile_path).read_text() if Path(profile_path).is_file() else ""
    docs = R["documents"]
    by_id = {d["id"]: d for d in docs}
    der = R["derived"]
    mach = R["machine"]
    bench = R.get("benchmarks")
    profiles = R.get("profiles", {})
    t = lambda d, th: d["median"][str(th)]["wall_s"]  # noqa: E731
    L = []
    w = L.append

    def quote_profile(name):
        """The named section of profile.txt as a code block, if present."""
        sec = section(prof_text, name)
        if sec:
            w("```")
            w(sec)
            w("```")
            w("")

    # --- header --------------------------------------------------------------------------------
    w("# Performance")
    w("")
    w("<!-- Generated by tools/perf/render.py from tools/perf/results.json; do not edit by hand. -->")
    w("")
    w(f"Every number on this page was measured by `{R['command']}` on {mach['date']} "
      f"(the run took {R['elapsed_s'] / 60:.1f} min) and is rewritten by the next run; "
      "[section 2](#2-how-to-reproduce) has the commands.")
    if R.get("quick"):
        w("This was a **quick** run: the 1,000,000-parameter document was run once per thread count "
          "instead of three times, the 1,000,000-parameter document with a plan was left out and the "
          "benchmarks ran for a shorter minimum time.")
    w("")

    # --- machine -------------------------------------------------------------------------------
    w("## 1. Machine")
    w("")
    g = R["git"]
    dirty = g.get("uncommitted") or []
    fault = mach.get("fault_ns_per_4k")
    w(table(["", ""], [
        ["CPU", f"{mach['cpu_model']}, {mach['nproc']} cores (`nproc`)"],
        ["memory", f"{mach['memory_gib']} GiB"],
        ["kernel, compiler", f"Linux {mach['kernel']}, {mach['compiler']}"],
        ["build", "`bazel build -c opt` (Bazel 4, `-O2`), oneTBB from Debian; the CLI links Debian's mimalloc "
                  "(transparent huge pages)"],
        ["source", f"commit `{g['head']}` ({g['subject']})"
         + (f", with uncommitted changes in {', '.join('`' + p + '`' for p in dirty)}" if dirty else "")],
        *([["fresh memory, per 4 KiB", f"{fault['small'] / 1000:.2f} us with small pages, "
             f"{fault['huge'] / 1000:.2f} us with transparent huge pages (a page fault each, or one per 2 MiB: "
             "64 MiB mapped and written, best of 3)"
             + (f"; {fault['huge_after_pause'] / 1000:.2f} us with huge pages after a {fault['pause_s']} s pause "
                "(once), when the VM has handed freed memory back to its host" if "huge_after_pause" in fault
                else "")]] if fault else []),
        ["load average at start / end", f"{' '.join(mach['loadavg_start'])} / {' '.join(mach.get('loadavg_end', []))}"],
    ]))
    w("")
    bench_busy = [v for run in ("one_cpu", "two_cpus") for v in ((bench or {}).get(run, {}) or {})
                  .get("busy_before", {}).values()]
    busiest = max([mach.get("busy_at_start", 0)] + [d.get("busy_before", 0) for d in docs] + bench_busy)
    if busiest > BUSY:
        w(f"> **The machine was shared during this run**: up to {busiest:.0%} of its CPUs were busy with other "
          "work in the second before a measurement (column *busy* below for the CLI runs). Times, and thread "
          "scaling most of "
          "all, are pessimistic; re-run `python3 tools/perf/measure.py --wait-idle 120` on a quiet machine.")
        w("")

    # --- reproduce -----------------------------------------------------------------------------
    w("## 2. How to reproduce")
    w("")
    w("```sh")
    w("python3 tools/perf/measure.py            # full run: builds, generates, measures, profiles, renders")
    w("python3 tools/perf/measure.py --quick    # 1 run of the 1M document, no 1M-with-plan document")
    w("python3 tools/perf/render.py             # re-render this page from tools/perf/results.json")
    w("python3 tools/perf/plot.py               # redraw tools/perf/time_memory.svg")
    w("```")
    w("")
    w("`measure.py` (Python standard library only) runs `bazel build -c opt //cli:shardplan //bench:gen_model "
      "//core:stages_benchmark`, copies the three binaries to a temporary directory, and for every document "
      "below runs:")
    w("")
    w("```sh")
    w("bazel-out/k8-opt/bin/bench/gen_model <arguments in the table> --out DOC")
    w('/usr/bin/time -f "%e %M %U %S" bazel-out/k8-opt/bin/cli/shardplan check --threads 1 DOC   # and --threads 2')
    w("```")
    w("")
    g300 = by_id.get("generic-300000", {})
    w300, t300 = g300.get("warmup", {}).get("1"), g300.get("median", {}).get("1")
    warm = ("One untimed warm-up run per thread count, then " if any("warmup" in d for d in docs) else "")
    w(f"{warm}{R['runs']} runs per thread count (threads 1 and 2 interleaved), the median is reported. "
      + ("The warm-up is there for this VM: it reports memory that has been free for about 2 s to its host "
         "(Linux's free page reporting, on in its kernel command line), and the first run after a pause "
         "(generating the document, waiting for an idle machine) pays for the host's backing that memory again "
         "(the machine table's fresh memory after a pause)" if warm else "")
      + (f"; the 300,000-parameter document's warm-up took {w300['wall_s']:.2f} s ({w300['sys_s']:.2f} s "
         f"system) on 1 thread, its median {t300['wall_s']:.2f} s ({t300['sys_s']:.2f} s system). "
         if w300 else ". " if warm else "")
      + ("Later runs could still get such memory, at random (two of five 1-thread runs of that document took "
         "0.58 and 0.62 s against 0.32-0.35 s, 2026-12-02), so each timed run follows `preback`: the script "
         "writes as much fresh memory as the warm-up's peak RSS and a quarter, and frees it, to leave memory "
         "the host backs for the run (the run still takes its own page faults and zeroes its pages)"
         + cold_note(g300) + ". " if any("prebacked_mib" in d for d in docs) else "") + "Wall time is "
      "measured around the process by the script (`perf_counter`, finer than `%e`), peak memory is `%M` "
      "(max RSS). `--threads 1` runs the engine on the calling thread without starting oneTBB; without "
      "`--threads`, the CLI uses all cores (docs/architecture.md). "
      "Every run must print `DOC: ok: ...`. Module and parameter counts are counted in each "
      "generated document (paths of `named_modules` / `named_parameters`, as the engine expands them). "
      "The per-phase numbers come from `//core:stages_benchmark` (Google Benchmark, `--benchmark_format=json`), "
      "once pinned to one CPU with `taskset -c 0` (oneTBB then runs one thread) and once on both CPUs, "
      "back to back for each model. "
      "Profiles: `valgrind --tool=callgrind` + `callgrind_annotate --inclusive=yes`, `perf record`, "
      "`valgrind --tool=massif`, all with `--threads 1`; their summaries are in "
      "[tools/perf/profile.txt](../tools/perf/profile.txt).")
    w("")
    rows = []
    for d in docs:
        rows.append([d["label"], f"`{d['gen_args']}`", d["gen_args"].count("--plan") and "yes" or "no"])
    w("<details><summary>The generated documents (gen_model arguments)</summary>")
    w("")
    w(table(["document", "gen_model arguments", "plan"], rows))
    w("")
    w("</details>")
    w("")

    # --- main table ----------------------------------------------------------------------------
    w("## 3. Time and peak memory against model size")
    w("")
    w("`shardplan check` end to end (process start, reading the file, parsing, every check, printing the "
      "summary), median wall time; peak RSS of the 2-thread runs.")
    w("")
    rows = []
    for d in docs:
        m1, m2 = d["median"]["1"], d["median"]["2"]
        rows.append([
            d["label"], num(d["param_paths"]), num(d["module_paths"]), mb(d["doc_bytes"]),
            ms(m1["wall_s"]), ms(m2["wall_s"]), f"{d['speedup_2_threads']:.2f}x",
            f"{m2['rss_kb'] / 1024:,.0f}", f"{d['rss_over_doc_t2']:.1f}x",
            f"{d.get('busy_before', 0):.0%}",
        ])
    w(table(["document", "parameters", "modules", "doc MB", "time, 1 thread", "time, 2 threads", "speedup",
             "peak RSS MiB", "RSS / doc", "busy"], rows))
    w("")
    w("![time and peak memory against the number of parameters](../tools/perf/time_memory.svg)")
    w("")
    w("Left: wall time (blue: 1 thread, orange: 2 threads); green: DeepSeek-like documents; red diamonds: the "
      "reference's figures placed at the parameter count of the DeepSeek-like document with the same number of "
      "modules (label: how many times faster the 2-thread CLI is); red bars: the targets. Right: peak RSS "
      "against the document's size (grey) and 3x the document's size (red, the target's ceiling).")
    w("")
    if der.get("decades"):
        w("**Scaling.** Time of 10x the parameters over the time of the smaller document (generic documents):")
        w("")
        w(table(["from", "to", "ratio, 1 thread", "ratio, 2 threads"],
                [[num(x["from"]), num(x["to"]), f"{x['ratio_t1']:.2f}x", f"{x['ratio_t2']:.2f}x"]
                 for x in der["decades"]]))
        w("")
        g0 = by_id.get("generic-10000")
        g1 = by_id.get("generic-1000000")
        if g0 and g1:
            a, b = g0["median"]["1"], g1["median"]["1"]
            w(f"From 10,000 to 1,000,000 parameters (100x) the time grows "
              f"{b['wall_s'] / a['wall_s']:.0f}x with one thread; the user CPU time grows "
              f"{b['user_s'] / max(a['user_s'], 0.005):.0f}x and the system CPU time (page faults, reading the "
              f"file) {b['sys_s'] / max(a['sys_s'], 0.005):.0f}x (`%U`/`%S`, {a['user_s']:.2f}+{a['sys_s']:.2f} s "
              f"to {b['user_s']:.2f}+{b['sys_s']:.2f} s; a 0.00 reading is a value under /usr/bin/time's 10 ms "
              f"resolution). Part of the small documents' time is process start-up.")
            w("")

    # --- per phase -----------------------------------------------------------------------------
    w("## 4. Per-phase breakdown")
    w("")
    if not bench:
        note = R.get("notes", {}).get("bench", "not run")
        w(f"`//core:stages_benchmark` was not available for this run ({note}), so there are no per-phase "
          "benchmark numbers; the callgrind breakdown below still splits the CLI's work by phase.")
        w("")
    else:
        summ = bench["summary"]
        w(f"`//core:stages_benchmark` on the largest model of each kind it registers "
          f"(`--benchmark_min_time={bench['min_time_s']}`; each model in {bench.get('rounds', 1)} "
          f"run{'s' if bench.get('rounds', 1) != 1 else ''} per CPU count (the run with the median time kept), each run the median of "
          f"{bench.get('repetitions', 1)} repetitions ± their standard deviation; of "
          f"{min(bench.get('repetitions', 1), bench.get('heavy_repetitions', 1))} for models of 300,000 "
          f"parameters or more), "
          f"milliseconds of wall time per call. Its models are "
          "built in memory by `bench/model_gen` and carry a final plan for every owner, so `PlanCheck` runs too "
          "(the CLI documents of section 3 have no plan unless marked). *ns/param path* is the 1-thread time "
          "divided by the model's parameter paths. *1 thread* is the benchmark pinned to one CPU "
          "(`taskset -c 0`), *2 threads* unpinned. Phases marked *parallel* are the checks with a parallel call "
          "(`ParallelFor`, `ParallelChunks`, `ParallelGather`, `ScanThenApply`) in their source (detected in `core/**/*.cc` at measurement time): the issue's parallel phases. Parsing, "
          "a two-stage pipeline with one parallel pass (references), is not one of them; its speedup is in the "
          "table all the same.")
        w("")
        for model, e in summ["models"].items():
            ph = e["phases"]
            w(f"**`{model}`**: {num(e.get('paths', 0))} module paths, {num(e.get('param_paths', 0))} parameter "
              f"paths, {num(e.get('owners', 0))} owners.")
            w("")
            rows = []
            for p in [x for x in ["BM_Parse", "BM_BuildTree", "BM_Collect", "BM_Nesting", "BM_OwnerChecks",
                                  "BM_Claims", "BM_PlanCheck", "BM_EndToEnd"] if x in ph]:
                v = ph[p]
                if v.get("error"):
                    rows.append([phase_label(p), "error: " + v["error"], "", "", ""])
                    continue
                rows.append([phase_label(p) + (" (parallel)" if p in summ["parallel_phases"] else ""),
                             with_sd(v["t1_ms"], v.get("t1_stddev_ms")),
                             with_sd(v["t2_ms"], v.get("t2_stddev_ms")) if v.get("t2_ms") else "n/a",
                             f"{v['speedup']:.2f}x" if v.get("speedup") else "n/a",
                             f"{v['ns_per_param_path_t1']:,.0f}" if v.get("ns_per_param_path_t1") else "n/a"])
            if "checks_ns_per_param_path_t1" in e:
                rows.append(["*claims and checks* (Collect to PlanCheck)", f"{e['checks_ms_t1']:,.2f}", "", "",
                             f"**{e['checks_ns_per_param_path_t1']:,.0f}**"])
            if "parallel_speedup" in e:
                rows.append(["*parallel phases together*", f"{e['parallel_t1_ms']:,.2f}",
                             f"{e['parallel_t2_ms']:,.2f}", f"**{e['parallel_speedup']:.2f}x**", ""])
            w(table(["phase", "1 thread ms", "2 threads ms", "speedup", "ns/param path"], rows))
            w("")
        w("`EndToEnd` is `Check` + `ResultToJson` on the text in memory (no file reading, no process start). "
          "`Claims` excludes collecting its owners (done with the timer paused).")
        w("")
    for key in ("callgrind-deepseek", "callgrind-generic-100000"):
        p = profiles.get(key)
        if not p:
            continue
        shares = ", ".join(f"{ph['phase']} {pct(ph['pct'])}" for ph in p["phases"] if ph["pct"] is not None)
        extra = (f"; the CLI's own work outside `shardplan::Check` (reading the file, printing) "
                 f"{pct(p['cli_outside_check_pct'])}" if p.get("cli_outside_check_pct") is not None else "")
        w(f"Where the CLI's instructions go on the {p['title']} (callgrind, inclusive share of "
          f"{p['total_ir'] / 1e9:.2f} G instructions): {shares}{extra}.")
        w("")

    # --- threads -------------------------------------------------------------------------------
    w("## 5. Thread scaling")
    w("")
    w(f"Only a {mach['nproc']}-core machine was available; no larger machine was lent to this task, so scaling "
      f"beyond {mach['nproc']} threads is unmeasured. `--threads 1` and `--threads 2` give the same results "
      "(the engine merges per-thread work in index order).")
    w("")
    rows = [[d["label"], ms(t(d, 1)), ms(t(d, 2)), f"{d['speedup_2_threads']:.2f}x",
             f"{d['median']['2']['user_s'] + d['median']['2']['sys_s']:.2f} s"] for d in docs]
    w("End to end (CLI), where reading the file runs on one thread and parsing on two at most (reading the "
      "large maps overlaps with the validating walk, in a two-stage pipeline):")
    w("")
    w(table(["document", "1 thread", "2 threads", "speedup", "CPU time, 2 threads"], rows))
    w("")
    w("The pipeline's two stages are not equal. Timed inside the CLI (a build with timers, not kept, at "
      "9c962e3 on the Intel Xeon VM; the fastest of 12 runs, 6 for the larger document), the stage that builds "
      "the document from the values read took 19.3 ms on the DeepSeek-V3-sized document, against 12.3 ms for "
      "the stage that reads them, with one thread; with two, 25.1 ms against 15.9 ms (it then reads values "
      "written on the other core; prefetching a batch's values before walking them did not shorten it). On "
      "the generic 100,000-parameter document: 75.8 against 49.6 ms with one thread, 68.0 against 47.0 ms "
      "with two. So with two threads the building stage is the critical path, and "
      "work taken off it shows in full: building each JSON-pointer token in place (dc7f62f), instead of "
      "copying a token just written to the stack (a 16-byte load of two narrower stores, which the store "
      "buffer cannot forward), took the DeepSeek-V3-sized document's 2-thread CLI run from 49.0 to 37.2 ms "
      "(best of 30 interleaved runs; 1 thread: 47.9 to 47.3 ms). The same change in the reading stage (each "
      "item read in place) made the 1-thread run faster and the 2-thread run slower, and was not kept.")
    w("")
    speeds = (bench or {}).get("cpu_speed_ms") or {}
    bounds = [b for b in (cpu_bound(speeds.get(k)) for k in ("before", "after")) if b]
    if bounds:
        low, high = f"{min(bounds):.2f}", f"{max(bounds):.2f}"
        bound_range = f"{low}x" if low == high else f"{low}-{high}x"
        w(f"**The CPUs' speeds.** `{speeds['probe']}` pinned to each CPU (median of 5), before the benchmarks "
          "and after: " + "; ".join(f"{k}, " + ", ".join(f"CPU {c} {v:.2f} ms" for c, v in speeds[k].items())
                                    for k in ("before", "after") if speeds.get(k)) + ". "
          f"A perfectly parallel phase can therefore run at most {bound_range} as fast on all CPUs as on CPU 0 "
          "alone (1 + t0/t1: the 1-CPU benchmarks run on CPU 0), and a stage that runs on one thread at a time "
          "(a pipeline's in-order stage) runs at the speed of whichever CPU oneTBB puts it on."
          + round_trip_sentence(speeds) + steady_sentence(R.get("steady")))
        w("")
    if bench:
        summ = bench["summary"]
        sites = bench.get("parallel_call_sites", [])
        w("Parallel phases (benchmarks, section 4): "
          + "; ".join(f"`{m}` {e['parallel_speedup']:.2f}x" for m, e in summ["models"].items()
                      if e.get("parallel_speedup")) + ".")
        w("Parallel call sites found in `core/`: "
          + ", ".join(f"`{s['function']}` ({s['file']}:{s['line']}, {phase_label(s['phase'] or '?')})" for s in sites)
          + ".")
        w("")
        cg = profiles.get("callgrind-deepseek")
        if cg:
            names = {"BM_Parse": "parse", "BM_BuildTree": "module tree", "BM_Collect": "collect owners",
                     "BM_Nesting": "nesting", "BM_OwnerChecks": "owner checks", "BM_Claims": "claims",
                     "BM_PlanCheck": "plan check"}
            par = {names[p] for p in summ["parallel_phases"] if p in names}
            parallel = sum(ph["pct"] or 0 for ph in cg["phases"] if ph["phase"] in par)
            parse = next((ph["pct"] or 0 for ph in cg["phases"] if ph["phase"] == "parse"), 0)
            serial = 100 - parallel - parse
            s = serial / 100
            w(f"Amdahl's bound for the CLI on the DeepSeek-V3-sized document: the parallel phases are "
              f"{parallel:.0f}% of its instructions (callgrind, 1 thread) and parsing, whose two pipeline stages "
              f"overlap, {parse:.0f}%; the other {serial:.0f}% (the other phases, reading the file and printing) "
              f"runs on one thread, so 2 threads can speed the whole run up by at most "
              f"{1 / (s + (1 - s) / 2):.2f}x (less, as the pipeline's stages are not equal).")
            w("")

    # --- reference -----------------------------------------------------------------------------
    w("## 6. Side by side with the reference")
    w("")
    w("The reference Python implementation's figures are those quoted in the performance issue; they were not "
      "re-measured here. The DeepSeek-like documents were generated with layers and experts chosen to come "
      "close to each figure's module count; the speedup compares times at slightly different module counts, "
      "as the table shows.")
    w("")
    rows = []
    for r in der.get("reference", []):
        d = by_id[r["doc"]]
        rows.append([num(r["reference_modules"]), ms(r["reference_s"]), d["label"], num(r["modules"]),
                     ms(r["t1_s"]), ms(r["t2_s"]), f"{r['speedup_t1']:,.0f}x", f"**{r['speedup_t2']:,.0f}x**"])
    ds = by_id.get("deepseek")
    if ds:
        rows.append(["63,000 (DeepSeek-V3)", ms(5.6), ds["label"], num(ds["module_paths"]), ms(t(ds, 1)),
                     ms(t(ds, 2)), f"{5.6 / t(ds, 1):,.0f}x", f"**{5.6 / t(ds, 2):,.0f}x**"])
    w(table(["reference modules", "reference time", "our document", "our modules", "ours, 1 thread",
             "ours, 2 threads", "speedup, 1 thread", "speedup, 2 threads"], rows))
    w("")

    # --- targets -------------------------------------------------------------------------------
    w("## 7. Targets")
    w("")
    w("The issue's targets, measured on this machine (benchmarks and CLI runs, not timed tests):")
    w("")
    rows = []
    for tg in der["targets"]:
        v, how = verdict(tg)
        lim = tg["limit"]
        limit = (f"≤ {fmt_val(tg, lim)}" if tg.get("better", "lower") == "lower" else f"≥ {fmt_val(tg, lim)}")
        rows.append([tg["what"], limit, fmt_val(tg, tg["measured"]), v, how])
    w(table(["target", "limit", "measured", "", "by how much"], rows))
    w("")
    w("Definitions: *claims and checks* is the sum of the `Collect`, `Nesting`, `OwnerChecks`, `Claims` and "
      "`PlanCheck` benchmarks (everything after parsing the document and building the module tree), pinned to "
      "one CPU, divided by the parameter paths. The DeepSeek and 1,000,000-parameter CLI times are the "
      "`--threads 2` runs of section 3, the CLI's default on this machine (documents without a plan); the decade ratios use 1 thread. *Parallel phases* "
      "are the phases marked parallel in section 4, summed, 1 CPU over 2 CPUs.")
    w("")

    # Targets missed, or met by less than CLOSE: a slower stretch of the VM can miss those.
    missed = [tg for tg in der["targets"] if tg["met"] is False]
    close = [tg for tg in der["targets"] if tg["met"] and margin(tg) < CLOSE]
    if missed or close:
        w("## 8. " + ("Targets missed or close to their limit" if close else "Why targets are missed"))
        w("")
        if close:
            w("Met by less than " + f"{CLOSE - 1:.0%}" + " in this run: " + "; ".join(
                f"{tg['what']} ({verdict(tg)[1]})" for tg in close) + ". A slower stretch of this VM "
              "(section 5) can miss them.")
            w("")
        w("What the measurements and profiles below show, target by target. The profiles are summarized in "
          "[tools/perf/profile.txt](../tools/perf/profile.txt) and quoted here as they were at this run.")
        w("")
        keys = {tg["key"] for tg in missed + close}
        cg = profiles.get("callgrind-deepseek")
        cg2 = profiles.get("callgrind-generic-100000")
        pf = profiles.get("perf")
        mf = profiles.get("massif")
        if "checks_ns_per_param_path" in keys and bench:
            for m, e in bench["summary"]["models"].items():
                if "checks_ns_per_param_path_t1" not in e:
                    continue
                parts = sorted(((p, e["phases"][p]["ns_per_param_path_t1"]) for p in
                                ["BM_Collect", "BM_Nesting", "BM_OwnerChecks", "BM_Claims", "BM_PlanCheck"]
                                if e["phases"].get(p, {}).get("ns_per_param_path_t1") is not None),
                               key=lambda x: -x[1])
                # Rounds more than 25% apart (of phases of 0.05 ms or more): the machine, not the
                # code (the median round is kept).
                spread = []
                for p, _ in parts:
                    r = bench["one_cpu"]["benchmarks"].get(f"{p}/{m}/real_time", {}).get("rounds") or []
                    if len(r) > 1 and min(r) >= 0.05 and max(r) > 1.25 * min(r):
                        spread.append(f"{phase_label(p)} " + ", ".join(f"{x:,.2f}" for x in sorted(r)) + " ms")
                w(f"**Claims and checks, `{m}`**: {e['checks_ns_per_param_path_t1']:,.0f} ns per parameter path "
                  f"with one thread, of which " + ", ".join(f"{phase_label(p)} {v:,.0f} ns" for p, v in parts)
                  + f" ({num(e.get('owners', 0))} owners, {num(e.get('param_paths', 0))} parameter paths)."
                  + (" Its 1-CPU rounds spread widely in this run (" + "; ".join(spread) + "): the machine was "
                     "disturbed while they ran, and the median round is the one kept." if spread else ""))
                w("")
            w("These phases go owner by owner, and most of their cost is instructions, not memory: at 10,000 "
              "parameters, whose arrays fit in the caches, the five phases took 103 ns per parameter path, "
              "against 109 ns at 1,000,000, in one `core_benchmark` run at 3fbe316 on an earlier VM (one CPU; this "
              "script's runs measure only the models above).")
            w("")
            w("What each check needs of a module the tree keeps packed, and no phase reads the 144-byte `Module` "
              "of an owner, except the plan check for an applied family. Work that repeats from owner to owner is "
              "not redone: an FQN that names the path after the previous one is compared whole (and, going down, "
              "a module's first child is tried before a name is hashed); a pattern ending with `*` steps its "
              "automaton through each child name once per thread (`NameSteps`), not through every path's "
              "characters; the last clean ports and placements are remembered and compared inline; a plan entry "
              "that repeats its owner's layout skips the checks the owner passed; an owner that declares and "
              "expects at most 16 parameters (a Linear, an expert's MLP, an attention block) is claimed without "
              "the per-thread stamp arrays; and the per-owner results of `ScanThenApply` are "
              "cleared, not rebuilt. Two costs were found late. Branches on random data: the generic model draws "
              "each Linear's owner at random, so which siblings a glob matches, and which siblings a provider list "
              "skips, cannot be predicted (matches are now counted without a branch; a skipped sibling still "
              "sends a provider's FQN through the slower walk). And streams the hardware does not fetch ahead: "
              "the plan's entries are now prefetched 16 ahead, by a helper that must be inlined, since GCC drops "
              "a call that only prefetches as free of effects; so are the FQN texts the plan check's resolver "
              "compares next (the entry's 8 entries ahead, the tree's 16 paths ahead: 1,000,000 parameters, "
              "one CPU, best of 10 runs, 29.7 -> 22.0 ms). Fewer bytes per owner: a layout is a pointer to "
              "its stored body and its origin (24 bytes; a plan entry 32), where it held the body itself (64 "
              "bytes, 88 before out_names went behind a pointer). What is left is spread thin over many small "
              "steps per owner; fewer passes over the owners (the owner checks fused into claims) would still "
              "cut it.")
            w("")
            w("Fresh memory costs too: `stages_benchmark` reports the page faults of each call (`page_faults`; "
              "each costs what section 1 gives for a fresh 4 KiB) and keeps the memory an iteration frees in the "
              "heap for the next "
              "(`mallopt`), as a long-lived process would; left to glibc's moving mmap threshold, `Claims` at "
              "1,000,000 parameters faulted 24 MB in per call in some runs (35 -> 44 ms) and none in others. "
              "The engine gives the kernel no memory hints (the CLI's allocator advises its large blocks for "
              "2 MiB pages, docs/architecture.md); in the benchmarks the heap the calls reuse and the document "
              "stay on 4 KiB pages, as in a binding's host process on glibc's defaults. With glibc's "
              "`glibc.malloc.hugetlb=1` tunable, which puts the whole heap on huge pages, these five phases at "
              "1,000,000 parameters took 0.86-0.95x the best time (one CPU, four A/Bs of 4-8 interleaved runs, "
              "2026-12-02, engine at 2e4c92e and 3a3abbe); the benchmarks do not set it.")
            w("")
        if keys & {"deepseek_cli_s", "deepseek_vs_reference"} and cg:
            tg = next(x for x in missed if x["key"] in ("deepseek_cli_s", "deepseek_vs_reference"))
            top = sorted((ph for ph in cg["phases"] if ph["pct"] is not None), key=lambda ph: -ph["pct"])
            w(f"**Time on the DeepSeek-V3-sized document** ({fmt_val(tg, tg['measured'])} against "
              f"{fmt_val(tg, tg['limit'])}). "
              + "By instructions (1 thread), "
              + ", ".join(f"{ph['phase']} is {ph['pct']:.1f}%" for ph in top[:4])
              + (f", the CLI's own reading and printing {cg['cli_outside_check_pct']:.1f}%"
                 if cg.get("cli_outside_check_pct") is not None else "")
              + ". The most expensive functions by self cost are "
              + ", ".join(f"`{r['name']}` ({r['pct']:.1f}%)" for r in cg["top_self"][:5]) + ".")
            w("")
            ds = by_id.get("deepseek")
            if ds and ds.get("samples"):
                runs = {n: ds["samples"][n] for n in ("1", "2") if ds["samples"].get(n)}
                w("**Run to run, on this machine**, the same binary on the same document took (wall time, system "
                  "time): " + "; ".join(
                      f"{n} thread{'s' if n != '1' else ''}: " + ", ".join(
                          f"{x['wall_s'] * 1000:.0f} ms ({x['sys_s']:.2f} s)" for x in v) for n, v in runs.items())
                  + ". The binary and the document are the same in every run: the spread is the machine's, "
                  "and the median of a few runs depends on when they ran.")
                w("")
            quote_profile("callgrind-deepseek")
        if keys & {"million_cli_s", "decade_ratio"} and pf:
            g1 = by_id.get("generic-1000000")
            user = [r for r in pf["self"] if not r["kernel"]]
            w(f"**Time on the 1,000,000-parameter document** ("
              + (f"{ms(t(g1, 2))} with 2 threads, {ms(t(g1, 1))} with 1; user {g1['median']['1']['user_s']:.2f} s, "
                 f"system {g1['median']['1']['sys_s']:.2f} s" if g1 else "")
              + f"). `perf` (1 thread) puts {pf['kernel_pct']:.1f}% of the samples in the kernel, mostly in "
              + ", ".join(f"`{r['name']}` ({r['pct']:.1f}%)" for r in [r for r in pf["self"] if r["kernel"]][:3])
              + "; the top user-space functions are "
              + ", ".join(f"`{r['name']}` ({r['pct']:.1f}%)" for r in user[:6]) + ".")
            if cg2:
                top = sorted((ph for ph in cg2["phases"] if ph["pct"] is not None), key=lambda ph: -ph["pct"])
                w(f"On the 100,000-parameter document callgrind splits the instructions as "
                  + ", ".join(f"{ph['phase']} {ph['pct']:.1f}%" for ph in top[:5]) + ".")
            dec_bad = [x for x in der.get("decades", []) if x["ratio_t1"] > R["targets_def"]["decade_ratio"]]
            cg0 = profiles.get("callgrind-generic-10000")
            if dec_bad:
                line = "Superlinear decades: " + ", ".join(
                    f"{num(x['from'])} -> {num(x['to'])} costs {x['ratio_t1']:.1f}x" for x in dec_bad) + "."
                if cg0 and cg2 and cg0.get("total_ir") and cg2.get("total_ir"):
                    r = cg2["total_ir"] / cg0["total_ir"]
                    line += (f" callgrind counts {r:.1f}x the instructions for 10x the parameters (10,000 -> "
                             f"100,000, whole process), so ")
                    line += ("the extra time is not extra work but memory traffic (page faults, cache misses on a "
                             "working set that no longer fits the caches)." if r <= 10.5 else
                             "the work itself grows faster than the parameters.")
                w(line)
            w("")
            quote_profile("perf")
            if cg2:
                quote_profile("callgrind-generic-100000")
        if "million_rss_over_doc" in keys and mf:
            d100 = by_id.get("generic-100000")
            ratio = f", {mf['peak_heap_bytes'] / d100['doc_bytes']:.1f}x its {mb(d100['doc_bytes'])} MB" if d100 else ""
            cli_bytes = sum(x["bytes"] for x in mf["sites"] if "RunCheck" in x["site"])
            rss = f" (the run's peak RSS: {d100['median']['1']['rss_kb'] / 1024:.0f} MiB)" if d100 else ""
            w(f"**Peak memory.** massif on the 100,000-parameter document: the heap peaks at "
              f"{mf['peak_heap_bytes'] / 2**20:.0f} MiB{ratio}{rss}. The largest live allocations at the peak are "
              + ", ".join(f"{x['bytes'] / 2**20:.0f} MiB in `{x['site']}`" for x in mf["sites"][:5])
              + f"; {cli_bytes / 2**20:.0f} MiB of the peak is allocated by the CLI itself (`RunCheck`), the "
              "rest by the engine.")
            w("")
            quote_profile("massif")
        if "parallel_speedup" in keys and bench:
            summ = bench["summary"]
            w("**Parallel speedup.** Per phase (1 CPU / 2 CPUs): " + "; ".join(
                f"`{m}`: " + ", ".join(f"{phase_label(p)} {e['phases'][p]['speedup']:.2f}x"
                                       for p in e.get("parallel_phases", []) if e["phases"][p].get("speedup"))
                for m, e in summ["models"].items() if e.get("parallel_phases")) + ".")
            least = []
            for m, e in summ["models"].items():
                sp = [(e["phases"][p]["speedup"], p) for p in e.get("parallel_phases", [])
                      if e["phases"][p].get("speedup") and (e["phases"][p].get("t1_ms") or 0) >= 0.05]
                if sp:
                    v, p = min(sp)
                    least.append(f"{phase_label(p)} on `{m}` ({v:.2f}x)")
            w("Each parallel phase but the owner checks has an in-order stage on one thread. Collection adds "
              "owners in the order the reference does (model providers, families, then each native request's matches pattern by "
              "pattern); where nothing can be refused (every FQN a module without an owner, in a tree without "
              "shared modules; no native hit twice, in a family's subtree or owned) it checks that and reserves "
              "the entries in parallel, and otherwise decides hit by hit on one thread. "
              "`ScanThenApply`'s applies, one block at a time in order, each on the thread that scanned it, make "
              "the claims on the shared owner map and settle the plan (chunks "
              "of owners keep their owner checks' diagnostics in order, appended chunk by chunk). The "
              "parallel work before them is cheap now, so those stages bound the speedup (Amdahl). The phases that scale least in this run: " + ", ".join(least) + ".")
            slower = [f"{phase_label(p)} on `{m}` ({e['phases'][p]['speedup']:.2f}x)"
                      for m, e in summ["models"].items() for p in e.get("parallel_phases", [])
                      if e["phases"][p].get("speedup") and e["phases"][p]["speedup"] < 1.0
                      and (e["phases"][p].get("t1_ms") or 0) >= 0.05]
            if bounds and min(bounds) < 1.9:
                reached = [(m, e["parallel_speedup"] / max(bounds)) for m, e in summ["models"].items()
                           if e.get("parallel_speedup")]
                w(f"On this machine no phase could reach more than {max(bounds):.2f}x: its CPUs were not equally "
                  "fast (section 5). Against that bound the parallel phases together reached "
                  + ", ".join(f"{f:.0%} on `{m}`" for m, f in reached) + "."
                  + (" Over 100% is the noise of the probe and the benchmarks: those phases ran as fast as the "
                     "CPUs allowed." if any(f > 1 for _, f in reached) else ""))
            if slower:
                w("A phase slower on two CPUs than on one (" + ", ".join(slower) + ") is not Amdahl: no stage "
                  "does more work on two threads.")
            w("Where the DeepSeek-V3-sized model's time goes on two threads (builds with timers, not kept, "
              "2026-12-02, round trip 150-250 ns): `Claims` scans blocks of about 1,000 owners in 45-51 us "
              "each on either thread count and applies each in 10-15 us, so its applies do not bound it. "
              "Until 2026-12-02 (evening) it had 15 even blocks: the first one, whose owners are spread over "
              "every layer (the model providers, the attention families, then experts 0-9 of each layer, in "
              "the reference's order), took 80 us to scan, the second thread waited about 30 us for it, and "
              "the thread of the fifteenth block worked alone for about 30 us at the end; `PlanCheck` (scans "
              "of 16 us, applies of 10 us) lost the same at both ends. The blocks now number a multiple of "
              "the threads, with the first and the last of half size (docs/architecture.md): neither wait "
              "is left. The claims' pass over the parameter names scales 1.7x. In `Collect` the glob "
              "matching scales 1.9x, the reservation of the native requests' 15,000 hits (two parallel "
              "passes over the module index, whose lines the calling thread wrote) 1.2x, and the model providers, families and family "
              "subtrees run on one thread. Until 2026-12-02 the claims' scans of the experts' MLPs went "
              "through the per-thread stamp arrays and took 70 us a block on two threads against 51 us on "
              "one (docs/architecture.md); the model's parallel phases then reached 1.10-1.52x.")
            w("On these VMs the 2-CPU speed of the phases whose threads pass data to each other changes over "
              "minutes with the time a cache line takes between the two vCPUs, which depends on where the host "
              "puts them: on 2026-12-01 (the AMD EPYC VM) its round trip (measured as `//bench:round_trip` "
              "does) was 93-204 ns at some times and 413-620 ns at others. In the slow stretches, `Claims` at "
              "1,000,000 parameters took 25-29 ms on two CPUs with oneTBB's pipeline (one CPU: 25-28 ms), while "
              "`Collect` and the owner checks, whose "
              "threads share nothing while they run, kept 1.8-1.9x. Timing each of its 512 blocks showed why: "
              "one CPU scans a block in 23 us and applies it in 13.5 us, and two threads that only scan take 25 us "
              "a block each, but with one thread applying the blocks the other had scanned, scanning and "
              "applying both took 47 us. Since 2026-12-01, `ScanThenApply` applies each block on the thread "
              "that scanned it, in turn: in a slow stretch `Claims` then took 20.5 ms on two CPUs (applies 30 us "
              "a block: the owners, placements and declarations they write were last written by the other "
              "CPU), in a fast one 13.5-14.5 ms, as with the pipeline. Each block handed between the threads "
              "also costs a few round trips on the in-order path: since blocks hold 1,024 owners instead of 256, "
              "and the claims' scan prefetches the lines its apply writes (docs/architecture.md), the "
              "DeepSeek-V3-sized model's `Claims` takes 0.87 instead of 1.13 ms on two CPUs in a slow stretch, "
              "and its `PlanCheck` 0.25 instead of 0.32 ms (medians of 10 interleaved runs). With two threads, a "
              "million owners go in 128 blocks instead of 512 since 2026-12-02: in a slow stretch `Claims` took "
              "13.7 instead of 16.4 ms on two CPUs (best of 8 interleaved runs), in a fast one the same. The "
              "DeepSeek-V3-sized model's parallel phases depend on it most: at commit d8817ee they reached "
              "1.73x in a measured run with a 158 ns round trip, and 1.58x an hour later with 430-520 ns "
              "(3.25 ms on one CPU, 2.05 ms on two, best of 6 and 4 interleaved runs, 2026-12-03): their "
              "phases take 0.1-1.7 ms, so each oneTBB fork and join and each block handed between the threads "
              "weighs more than at 1,000,000 parameters, which kept 1.8x. The median of the rounds is kept, so a "
              "run whose rounds fall in a slow stretch reports it; the round trips before and after the "
              "benchmarks are in section 5.")
            if busiest > BUSY:
                w(f"The second CPU was not free during this run (up to {busiest:.0%} of the machine busy with "
                  "other work), which caps any 2-thread speedup; re-run with `--wait-idle` on a quiet machine "
                  "before drawing conclusions.")
            w("")
        for tg in missed:
            if tg["key"] == "decade_ratio" and not pf:
                w(f"**Scaling**: {tg['what']} is {tg['measured']:.2f}x; no perf profile was taken in this run.")
                w("")
    wasm_path = HERE / "wasm.json"
    if wasm_path.exists():
        render_wasm(w, json.loads(wasm_path.read_text()), mach)
    storm_path = HERE / "storm.json"
    if storm_path.exists():
        render_storm(w, json.loads(storm_path.read_text()), mach)
    notes = R.get("notes") or {}
    if notes:
        w("## Notes from the run")
        w("")
        for k, v in notes.items():
            w(f"- {k}: {v}")
        w("")
    Path(out_path).write_text("\n".join(L).rstrip() + "\n")


def render_wasm(w, x, mach):
    """The WebAssembly budgets (tools/perf/wasm.json, written by measure_wasm.py); `mach` is section 1's
    machine."""
    w("## 9. WebAssembly")
    w("")
    if "cpu_model" not in x:
        where = f"a {x['nproc']}-core machine not recorded further"
    elif (x["cpu_model"], x["kernel"]) == (mach.get("cpu_model"), mach.get("kernel")):
        where = "the machine of section 1"
    else:
        where = f"another machine than section 1's ({x['cpu_model']}, {x['nproc']} cores, Linux {x['kernel']})"
    w(f"Measured by `python3 tools/perf/measure_wasm.py` on {x['measured_at']} at commit `{x['commit']}`, on "
      f"{where} ({x['emcc']}; Node {x['node']}; headless Chromium {x['chromium']}); "
      f"medians of {x['runs']} runs (the browser: of at least 3, the first one warming the engine up). "
      f"The document is the DeepSeek-V3-sized one of section 3 ({mb(x['document_bytes'])} MB). The WebAssembly "
      "engine is the serial build (no threads); the page runs it in a Web Worker.")
    w("")
    size = sum(x["sizes"].values())
    size_budget = 1.5e6
    rows = [
        ["wasm + JS a page loads (`shardplan.mjs` with the wasm inlined, `index.mjs`), uncompressed",
         "≤ 1.50 MB", f"{size / 1e6:.2f} MB", "**met**" if size <= size_budget else "**missed**",
         f"{size / size_budget:.0%} of the budget"],
    ]
    # The browser's check() makes the result JSON (and JSON.parse reads it): the native CLI doing
    # the same work is `--format json`. The summary-text runs are shown too.
    for key, what in [("native_json_threads1_s", "native CLI `--format json`, 1 thread"),
                      ("native_json_all_s", "native CLI `--format json`, all cores")]:
        ratio = x["browser_engine_s"] / x[key]
        rows.append([f"checking the DeepSeek-V3-sized document in the browser (engine in the worker) / {what}",
                     "≤ 3.00x", f"{ratio:.2f}x", "**met**" if ratio <= 3 else "**missed**",
                     f"{ms(x['browser_engine_s'])} against {ms(x[key])}"])
    w(table(["budget", "limit", "measured", "", "detail"], rows))
    w("")
    w("The browser's figure is what the page's worker runs, `Shardplan.checkDetails`: parse, check, the result "
      "JSON and `JSON.parse` of it, and the owners and owned parameters read through the C ABI; the "
      "native run doing the same work is `shardplan check --format json`, which writes the result JSON "
      f"({mb(x['result_json_bytes'])} MB on this document). The CLI's default summary text skips the result JSON: "
      f"against it ({ms(x['native_threads1_s'])} with 1 thread, {ms(x['native_all_s'])} on all cores) the browser "
      f"takes {x['browser_engine_s'] / x['native_threads1_s']:.2f}x and "
      f"{x['browser_engine_s'] / x['native_all_s']:.2f}x; until the native engine got faster in issue 3's "
      "second round, section 9 compared with that run alone.")
    w("")
    w(f"Also measured: the engine in Node through the npm package, `check()` of the text in memory including "
      f"`JSON.parse` of the result, {ms(x['node_check_s'])}; the page end to end (opening the file to the "
      f"rendered result: reading it, the check, parsing the document for the tree, posting the result and "
      f"drawing) {ms(x['browser_end_to_end_s'])}. The native figures are whole processes (start-up and reading "
      "the file included); the browser's engine figure is the check alone.")
    w("")


def render_storm(w, x, mach):
    """The diagnostic storm's bounds (tools/perf/storm.json, written by storm.py); `mach` is section 1's
    machine."""
    w("## 10. Diagnostic storm")
    w("")
    m = x["machine"]
    if (m["cpu_model"], m["kernel"]) == (mach.get("cpu_model"), mach.get("kernel")):
        where = "the machine of section 1"
    else:
        where = f"another machine than section 1's ({m['cpu_model']}, {m['cores']} cores, Linux {m['kernel']})"
    valid, storm = x["documents"]["valid"], x["documents"]["storm"]
    cases = x["cases"]
    st = cases.get("storm-text")
    by_code = (st or {}).get("by_code") or {}
    errors = sum(by_code.values())
    runs = "one run" if x["runs"] == 1 else f"medians of {x['runs']} runs"
    w(f"Measured by `{x['command']}` on {x['measured_at']} at commit `{x['commit']}`, on {where} "
      f"({m['memory_gib']} GiB; load average {' '.join(m['loadavg_start'])} at the start, "
      f"{' '.join(m['loadavg_end'])} at the end); {runs} after one untimed warm-up each, "
      "every case and thread count interleaved in each round. "
      f"The valid document is `gen_model {valid['gen_model']}` ({mb(valid['bytes'])} MB): its owners are all "
      f"declared by one native request, `{valid['match']}`. The storm document is the same text with "
      f"`{storm['match']}` instead ({mb(storm['bytes'])} MB): the over-wide glob also matches every block, "
      "which then overlaps its weights' owners and declares a parameter and forward inputs it does not have: "
      + (f"{num(errors)} errors (" + ", ".join(f"{num(n)} `{c}`" for c, n in by_code.items()) + "). " if by_code else "")
      + "Each run is `/usr/bin/time -f '%e %M' shardplan check --threads T [options] DOC > FILE`: the wall time "
      "is taken around the process, the peak memory is `%M` (max RSS), the output is the bytes written to "
      "standard output. `python3 tools/perf/storm.py` builds the two binaries, generates both documents, runs "
      "everything and re-renders this section (`--help` for its options)."
      + (f" The *before* rows are the CLI of commit `{x['before_commit']}`, which printed every diagnostic."
         if x.get("before_commit") else ""))
    w("")
    rows = []
    for cid, c in cases.items():
        doc_bytes = x["documents"][c["document"]]["bytes"]
        for t, r in c["median"].items():
            listed = "" if r.get("listed") is None or r["listed"] == r["diagnostics"] else f" ({num(r['listed'])} listed)"
            rows.append([c["what"], "1" if t == "1" else f"all ({m['cores']})", ms(r["wall_s"]),
                         f"{r['rss_bytes'] / 1e6:,.0f} MB", f"{r['rss_bytes'] / doc_bytes:.2f}x",
                         f"{r['stdout_bytes']:,} B" if r["stdout_bytes"] < 1e6 else f"{mb(r['stdout_bytes'])} MB",
                         r["exit_code"], num(r["diagnostics"]) + listed])
    w(table(["run", "threads", "wall", "peak RSS", "RSS / document", "output", "exit", "diagnostics"], rows))
    w("")
    if x["bounds"]:
        brow = []
        for b in x["bounds"]:
            verdict_text, detail = verdict(b)
            if b["unit"] == "bytes":
                limit, measured = f"< {b['limit'] / 1e6:g} MB", f"{b['measured']:,} B"
            else:
                limit, measured = f"≤ {b['limit']:.2f}x", f"{b['measured']:.2f}x"
            brow.append([b["what"], limit, measured, verdict_text, "; ".join(d for d in (b["detail"], detail) if d)])
        w("The issue's bounds (\"memory stays bounded whatever the count\"), on the storm's default text run "
          "and on its `--format json` run, which lists every diagnostic:")
        w("")
        w(table(["bound", "limit", "measured", "", "detail"], brow))
        w("")
    notes = []
    vt, j50 = cases.get("valid-text"), cases.get("storm-json50")
    if vt and st:
        notes.append("For comparison, the valid document's own run takes " + " and ".join(
            f"{vt['median'][t]['rss_bytes'] / valid['bytes']:.2f}x its size ({thread_words(t)})" for t in vt["median"])
            + " in peak RSS.")
        if j50 and any(b["key"].startswith("rss_ratio") and not b["met"] for b in x["bounds"]):
            notes[-1] += (" The engine keeps as few of the storm's diagnostics for `--format json --max-diagnostics 50` "
                          "(3 of each group) as for the text, and that run peaks " + " and ".join(
                              f"{(st['median'][t]['rss_bytes'] - j50['median'][t]['rss_bytes']) / 1e6:,.0f} MB lower "
                              f"({thread_words(t)})" for t in st["median"] if t in j50["median"])
                          + ": what the text run takes beyond it is not the diagnostics but the text's `DOC:LINE:COL`, for "
                          "which the CLI maps the document again (the engine let the first mapping go once it had "
                          "parsed it) to find the shown diagnostics' lines and columns.")
    spread = [max(r["wall_s"] for r in runs) / min(r["wall_s"] for r in runs)
              for c in cases.values() for runs in (c.get("samples") or {}).values() if runs]
    load = max(float(m["loadavg_start"][0]), float(m["loadavg_end"][0]))
    if spread and (load > m["cores"] or max(spread) > 1.3):
        shared = (f"The machine was shared with other work during the run (load average up to {load:.1f} on "
                  f"{m['cores']} cores): t" if load > m["cores"] else "T")
        notes.append(f"{shared}he runs of one case differed by up to {max(spread):.1f}x in wall time, so a time "
                     "ratio near its limit is within the noise. The time ratios compare medians of runs interleaved "
                     "in the same rounds; the peak RSS does not depend on the load.")
    for cid, what in [("storm-json50", "`--format json --max-diagnostics 50`"), ("storm-json-all", "`--format json`")]:
        c = cases.get(cid)
        if not c:
            continue
        parts = ", ".join(f"{c['median'][t]['rss_bytes'] / storm['bytes']:.2f}x the document in peak RSS and "
                          f"{ms(c['median'][t]['wall_s'])} ({thread_words(t)})" for t in c["median"])
        out = c["median"]["1"]["stdout_bytes"]
        if cid == "storm-json-all":
            notes.append(f"{what} lists every diagnostic (its default, `--max-diagnostics 0`), each written as the "
                         f"engine makes it, so that none is held: {parts}, {mb(out)} MB of output.")
        else:
            listed = c["median"]["1"].get("listed")
            notes.append(f"{what} lists {num(listed)} diagnostics (at most 3 of each group, 50 in all) and still "
                         f"counts every one in `groups` and `counts`: {parts}, {out:,} bytes of output.")
    bs = cases.get("before-storm-text")
    if bs:
        r = bs["median"]["1"]
        notes.append(f"Before, the storm's text took {ms(r['wall_s'])} and {r['rss_bytes'] / 1e6:,.0f} MB "
                     f"({r['rss_bytes'] / storm['bytes']:.2f}x the document) with 1 thread and printed "
                     f"{mb(r['stdout_bytes'])} MB.")
    for n in notes:
        w(n)
        w("")


def thread_words(t):
    return "1 thread" if str(t) == "1" else "all cores"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    src = Path(argv[0]) if len(argv) > 0 else HERE / "results.json"
    prof = Path(argv[1]) if len(argv) > 1 else HERE / "profile.txt"
    dst = Path(argv[2]) if len(argv) > 2 else REPO / "docs" / "performance.md"
    render(json.loads(src.read_text()), prof, dst)


if __name__ == "__main__":
    main()

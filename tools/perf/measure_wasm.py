#!/usr/bin/env python3
"""Measures the WebAssembly budgets and writes tools/perf/wasm.json.

    python3 tools/perf/measure_wasm.py [--runs N]

1. builds the native CLI and the generator (-c opt) and the npm package and page (--config=wasm);
2. generates the DeepSeek-V3-sized document (bench/gen_model --kind deepseek);
3. times, median of N runs each: the native CLI end to end (--threads 1, and all cores; the summary
   text, and --format json, which makes the result JSON as check() does); the
   engine in Node through the npm package (check() of the text in memory, JSON.parse of the
   result included); the page in headless Chromium (wasm/test/browser_bench.mjs: the engine
   inside the worker, and end to end from opening the file to the rendered result);
4. records the sizes of the files a page loads (engine + wrapper, uncompressed).
render.py turns wasm.json into section 8 of docs/performance.md. Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from measure import cpu_model  # noqa: E402  (tools/perf/measure.py)

NODE_BENCH = r"""
import fs from 'node:fs';
const [npm, doc, runs] = process.argv.slice(2);
const { load } = await import(`${npm}/index.mjs`);
const shardplan = await load();
const text = fs.readFileSync(doc, 'utf8');
const times = [];
let ok;
for (let i = 0; i < Number(runs); i++) {
  const t0 = performance.now();
  ok = shardplan.check(text).ok;
  times.push(performance.now() - t0);
}
console.log(JSON.stringify({ ok, times_ms: times }));
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, cwd=REPO, text=True, capture_output=True, **kw).stdout


def bazel_bin(*flags):
    return Path(sh(["bazel", "info", *flags, "bazel-bin"]).strip())


def cli_times(cli, doc, threads, runs, json_format=False):
    """The CLI's wall times, and the bytes it printed; with json_format, `--format json` (the result
    JSON, as check() makes)."""
    times = []
    extra = ["--format", "json"] if json_format else []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([str(cli), "check", "--threads", str(threads), *extra, str(doc)],
                             capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        ok = '"ok":true' in out.stdout[:200] if json_format else ": ok:" in out.stdout
        if not ok:
            sys.exit(f"the CLI did not pass {doc}: {out.stdout[-300:]}")
    return times, len(out.stdout.encode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    print("[wasm] building", flush=True)
    sh(["bazel", "build", "-c", "opt", "//cli:shardplan", "//bench:gen_model"])
    opt = bazel_bin("-c", "opt")
    sh(["bazel", "build", "--config=wasm", "//wasm:npm", "//wasm:site"])
    wasm = bazel_bin("--config=wasm") / "wasm"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cli = tmp / "shardplan"
        cli.write_bytes((opt / "cli/shardplan").read_bytes())
        cli.chmod(0o755)
        doc = tmp / "deepseek.json"
        sh([str(opt / "bench/gen_model"), "--kind", "deepseek", "--out", str(doc)])

        print("[wasm] native CLI", flush=True)
        native1, _ = cli_times(cli, doc, 1, args.runs)
        native_all, _ = cli_times(cli, doc, 0, args.runs)
        native_json1, json_bytes = cli_times(cli, doc, 1, args.runs, json_format=True)
        native_json_all, _ = cli_times(cli, doc, 0, args.runs, json_format=True)

        print("[wasm] Node", flush=True)
        script = tmp / "node_bench.mjs"
        script.write_text(NODE_BENCH)
        node = json.loads(sh(["node", str(script), str(wasm / "npm"), str(doc), str(args.runs)]))

        print("[wasm] Chromium", flush=True)
        out = tmp / "browser.json"
        sh(["node", "wasm/test/browser_bench.mjs", "--runs", str(max(3, args.runs)), "--json", str(out), str(doc)],
           env={**os.environ, "SHARDPLAN_SITE": str(wasm / "site")})
        browser = json.loads(out.read_text())
        doc_bytes = doc.stat().st_size

    sizes = {name: (wasm / "npm" / name).stat().st_size for name in ("shardplan.mjs", "index.mjs")}
    med = statistics.median
    result = {
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": sh(["git", "rev-parse", "--short", "HEAD"]).strip(),
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model(),  # with the kernel, as measure.py records them (render.py compares)
        "kernel": platform.release(),
        "emcc": sh(["emcc", "--version"], env={**os.environ, "NODE_PATH": "/usr/share/nodejs"}).splitlines()[0],
        "node": sh(["node", "--version"]).strip(),
        "chromium": browser["chromium"],
        "document_bytes": doc_bytes,
        "runs": args.runs,
        "sizes": sizes,
        "native_threads1_s": med(native1),
        "native_all_s": med(native_all),
        "native_json_threads1_s": med(native_json1),
        "native_json_all_s": med(native_json_all),
        "result_json_bytes": json_bytes,
        "node_check_s": med(node["times_ms"]) / 1e3,
        # The first browser run warms the engine up; the median is over all runs.
        "browser_engine_s": med(r["engineMs"] for r in browser["runs"]) / 1e3,
        "browser_end_to_end_s": med(r["endToEndMs"] for r in browser["runs"]) / 1e3,
    }
    (HERE / "wasm.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    sys.path.insert(0, str(HERE))
    import render  # noqa: E402  (re-render docs/performance.md with the new section)
    render.main([])


if __name__ == "__main__":
    main()

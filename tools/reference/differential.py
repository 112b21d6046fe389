#!/usr/bin/python3
"""Differential test: the shardplan CLI against the Python reference model.

Usage:
  python3 differential.py --cli PATH DOC_DIR            # every *.json in DOC_DIR
  python3 differential.py --cli PATH --seed N --count K   # generate K documents first (temp dir)

For each document, runs `PATH check --format json DOC` and shardplan_reference, and compares:
  - same `ok`;
  - ok: the CLI's `owned` equals the reference's under shared/conformance/README.md rules
    (`specs`, `parallel` as objects; `owned_names`, `expected`, `required` lists as sorted lists;
    `aliases` as an ordered list of pairs), and no diagnostic has severity "error";
  - not ok: diagnostics[0] has severity "error" and the reference's code and message
    (for invalid-document only the code is compared).
Mismatches are printed with the file name; the last line is `N passed, M failed`; the exit status
is non-zero when any failed.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shardplan_reference as ref  # noqa: E402
from check_conformance import normalize_owned  # noqa: E402


def run_cli(cli, command, path, timeout, check_exit=False):
    """`cli COMMAND --format json path` as (result object, None), or (None, reason). With
    `check_exit`, the exit status must also be 0 when ok and 1 when not."""
    try:
        p = subprocess.run([cli, command, "--format", "json", path], capture_output=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout}s"
    except OSError as e:
        return None, f"cannot run CLI: {e}"
    try:
        out = json.loads(p.stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        return None, f"exit {p.returncode}, stdout is not one JSON object ({e}); stderr: {err}"
    if not isinstance(out, dict):
        return None, "stdout is not a JSON object"
    if check_exit and p.returncode != (0 if out.get("ok") else 1):
        return None, f"exit status {p.returncode} with ok={out.get('ok')}"
    return out, None


def compare(want, got):
    """Returns None when the CLI result agrees with the reference result, else a reason."""
    if got.get("schema") != "shardplan.result.v1":
        return f"schema is {got.get('schema')!r}, not 'shardplan.result.v1'"
    if not isinstance(got.get("ok"), bool):
        return "`ok` missing or not a boolean"
    diags = got.get("diagnostics")
    if not isinstance(diags, list):
        return "`diagnostics` missing or not a list"
    if got["ok"] != want["ok"]:
        first = diags[0] if diags else None
        brief = f"{first.get('code')}: {first.get('message')}" if isinstance(first, dict) else "-"
        if want["ok"]:
            return f"reference ok, CLI failed with {brief}"
        return (f"reference failed with {want['error']['code']}: {want['error']['message']}, "
                f"CLI ok (first diagnostic {brief})")
    if want["ok"]:
        errors = [d for d in diags if isinstance(d, dict) and d.get("severity") == "error"]
        if errors:
            return f"ok but reports error diagnostics: {errors[0]}"
        if not isinstance(got.get("owned"), dict):
            return "ok but `owned` missing"
        try:
            g = normalize_owned(got["owned"])
        except (TypeError, AttributeError) as e:
            return f"malformed `owned`: {e}"
        w = normalize_owned(want["owned"])
        for k in w:
            if g[k] != w[k]:
                return (f"owned.{k} differs\n    reference {json.dumps(w[k], sort_keys=True)}\n"
                        f"    cli       {json.dumps(g[k], sort_keys=True)}")
        return None
    if not diags or not isinstance(diags[0], dict):
        return f"not ok but no diagnostics (reference: {want['error']['code']})"
    d0 = diags[0]
    if d0.get("severity") != "error":
        return f"diagnostics[0] has severity {d0.get('severity')!r}, not 'error'"
    code, message = want["error"]["code"], want["error"]["message"]
    if d0.get("code") != code:
        return (f"first code {d0.get('code')!r} (message {d0.get('message')!r}), "
                f"reference {code!r} ({message!r})")
    if code != "invalid-document" and d0.get("message") != message:
        return f"{code}: message {d0.get('message')!r}, reference {message!r}"
    return None


def drive(argv, *, description, default_count, command, generate_one, run_model, compare,
          check_exit=False):
    """The command line shared with plan_differential.py: documents from a directory or generated
    by `generate_one(seed, index)`, each run by the CLI (`command`) and by `run_model(path)`;
    `compare(model, cli)` gives None or a list of reasons. Prints every mismatch and
    `N passed, M failed`; returns the exit status."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--cli", required=True, help="path of the shardplan executable")
    ap.add_argument("docs", nargs="?", help="directory of *.json documents")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--count", type=int, default=default_count)
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per CLI run")
    ap.add_argument("--keep", help="with --seed: generate into this directory (kept)")
    ap.add_argument("--show", type=int, default=8, help="reasons shown per mismatch")
    args = ap.parse_args(argv)
    if (args.docs is None) == (args.seed is None):
        ap.error("give either a document directory or --seed/--count")

    tmp = None
    if args.docs is not None:
        doc_dir = args.docs
    else:
        if args.keep:
            doc_dir = args.keep
        else:
            tmp = tempfile.mkdtemp(prefix=f"shardplan-{command}-diff-")
            doc_dir = tmp
        os.makedirs(doc_dir, exist_ok=True)
        for i in range(args.count):
            with open(os.path.join(doc_dir, f"{i:05d}.json"), "w") as f:
                f.write(generate_one(args.seed, i))

    names = sorted(n for n in os.listdir(doc_dir) if n.endswith(".json"))
    cli = os.path.abspath(args.cli) if os.path.exists(args.cli) else args.cli
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {n: pool.submit(run_cli, cli, command, os.path.join(doc_dir, n), args.timeout, check_exit)
                   for n in names}
        for n in names:
            want = run_model(os.path.join(doc_dir, n))
            got, err = futures[n].result()
            why = [err] if got is None else compare(want, got)
            if not why:
                passed += 1
                continue
            failed += 1
            print(f"MISMATCH {os.path.join(doc_dir, n)}:", flush=True)
            for w in why[:args.show]:
                print(f"    {w}")
            if len(why) > args.show:
                print(f"    ... {len(why) - args.show} more")
    if tmp is not None:
        if failed:
            print(f"(generated documents kept in {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def main(argv):
    import gen_documents

    def reasons(want, got):
        why = compare(want, got)
        return None if why is None else [why]

    return drive(argv, description="Compare the shardplan CLI with the reference model.", default_count=200,
                 command="check", generate_one=gen_documents.generate_one, run_model=ref.run_file,
                 compare=reasons)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

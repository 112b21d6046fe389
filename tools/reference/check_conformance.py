#!/usr/bin/python3
"""Runs shardplan_reference over a conformance cases/expected directory pair.

Usage: python3 check_conformance.py CASES_DIR EXPECTED_DIR [-v]

Comparison rules (shared/conformance/README.md): for ok results, `specs` and `parallel` as
objects, `owned_names`, `expected` and the lists in `required` as sorted lists, `aliases` as an
ordered list of pairs; for failures, code and message exactly.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shardplan_reference as ref  # noqa: E402


def normalize_owned(owned):
    return {
        "specs": owned.get("specs"),
        "parallel": owned.get("parallel"),
        "owned_names": sorted(owned.get("owned_names") or []),
        "expected": sorted(owned.get("expected") or []),
        "required": {k: sorted(v) for k, v in (owned.get("required") or {}).items()},
        "aliases": [list(a) for a in (owned.get("aliases") or [])],
    }


def same_result(got, want):
    """Returns None when equal, else a short reason."""
    if got.get("ok") != want.get("ok"):
        return f"ok {got.get('ok')} != {want.get('ok')}"
    if want["ok"]:
        g, w = normalize_owned(got["owned"]), normalize_owned(want["owned"])
        for k in w:
            if g[k] != w[k]:
                return f"owned.{k} differs:\n  got  {json.dumps(g[k], sort_keys=True)}\n  want {json.dumps(w[k], sort_keys=True)}"
        return None
    if got["error"] != want["error"]:
        return f"error {got['error']} != {want['error']}"
    return None


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cases_dir, expected_dir = args
    passed = failed = 0
    for name in sorted(os.listdir(cases_dir)):
        if not name.endswith(".json"):
            continue
        exp_path = os.path.join(expected_dir, name)
        if not os.path.exists(exp_path):
            print(f"SKIP {name}: no expected file")
            continue
        with open(exp_path) as f:
            want = json.load(f)
        got = ref.run_file(os.path.join(cases_dir, name))
        why = same_result(got, want)
        if why is None:
            passed += 1
            if verbose:
                print(f"ok   {name}")
        else:
            failed += 1
            print(f"FAIL {name}: {why}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

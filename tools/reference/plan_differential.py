#!/usr/bin/python3
"""Differential test of `shardplan plan` against the planner model (planner_reference.py).

Usage:
  python3 plan_differential.py --cli PATH DOC_DIR               # every *.json in DOC_DIR
  python3 plan_differential.py --cli PATH --seed S --count N    # generate N documents first
        [--keep DIR] [-j J] [--timeout SECONDS] [--show N]

For each document, runs `PATH plan --format json DOC` and the model, and compares:
  - `ok`;
  - when the model knows every diagnostic (the ownership checks passed): the list of
    (code, severity) in order, and the message of every code of shardplan-v1 section 5 (those
    messages are the reference's); planner codes (template-*, unused-template-rule, shape checks,
    unplanned-parameters) by code and severity only;
  - when the ownership model stopped at its first error: diagnostics[0] (code, severity "error",
    message except for invalid-document) and no plan in the output;
  - `owned` when ok (the rules of differential.py);
  - when the model made a plan: `plan` (entries, their order, the order of each layout's keys
    and of params / ports; named placements as objects), `provenance`, `memory` (every field),
    `communication` (the list, in order) and `collectives` exactly; when it made none, the CLI
    prints none of these keys.
Mismatches are printed with the file name and the first differences; the last line is
`N passed, M failed`; exit status 1 when any failed.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import differential  # noqa: E402
import planner_reference as planner  # noqa: E402
from check_conformance import normalize_owned  # noqa: E402

PLAN_KEYS = ("plan", "provenance", "memory", "communication", "collectives")
# codes whose messages are the reference framework's (shardplan-v1 section 5)
REFERENCE_CODES = {
    "unknown-module", "multiple-owners", "parallel-member-undeclared", "unknown-output",
    "native-no-match", "native-overlaps-family", "overlapping-communication", "legacy-injection",
    "ports-missing", "ports-mismatch", "unknown-forward-input", "duplicate-output-name",
    "unknown-axis", "partial-parameter", "parallel-unknown-axis", "unknown-parameter",
    "nested-duplicate", "shared-conflict", "omitted-parameters", "override-shared-conflict",
    "override-removed-ownership", "override-removed-coverage", "family-layout-changed"}


def _d(x):
    return json.dumps(x)


def _ordered(x):
    """Comparable form of a layout map keeping key order, named placements as objects."""
    if not isinstance(x, dict):
        return x
    return [(k, v) for k, v in x.items()]


def layout_diff(want, got):
    if not isinstance(got, dict):
        return f"not an object: {_d(got)}"
    if list(want) != list(got):
        return f"keys {list(got)}, model {list(want)}"
    for k in want:
        if k == "out_names":
            if want[k] != got[k]:
                return f"out_names {_d(got[k])}, model {_d(want[k])}"
        elif _ordered(want[k]) != _ordered(got[k]):
            return f"{k} {_d(got[k])}, model {_d(want[k])}"
    return None


def compare(want, got):
    """None when the CLI result agrees with the model, else a list of reasons."""
    why = []
    if got.get("schema") != "shardplan.result.v1":
        return [f"schema is {got.get('schema')!r}"]
    diags = got.get("diagnostics")
    if not isinstance(diags, list) or not all(isinstance(d, dict) for d in diags):
        return ["`diagnostics` missing or malformed"]
    if got.get("ok") != want["ok"]:
        why.append(f"ok: cli {got.get('ok')}, model {want['ok']}")
    gd = [(d.get("code"), d.get("severity")) for d in diags]
    wd = [(c, s) for c, s, _ in want["diagnostics"]]
    if not want["complete"]:
        code, sev, msg = want["diagnostics"][0]
        if not diags:
            why.append(f"no diagnostics, model first {code}")
        else:
            d0 = diags[0]
            if (d0.get("code"), d0.get("severity")) != (code, sev):
                why.append(f"diagnostics[0] {d0.get('code')} ({d0.get('severity')}): "
                           f"{d0.get('message')!r}; model {code}: {msg!r}")
            elif code != "invalid-document" and d0.get("message") != msg:
                why.append(f"{code}: message {d0.get('message')!r}, model {msg!r}")
        extra = [k for k in PLAN_KEYS if k in got]
        if extra:
            why.append(f"CLI prints {extra} though the ownership checks failed")
        return why or None
    if gd != wd:
        # show where the lists part
        i = 0
        while i < min(len(gd), len(wd)) and gd[i] == wd[i]:
            i += 1
        why.append(f"diagnostics differ at {i}:\n      cli   {gd[i:i + 6]}\n"
                   f"      model {wd[i:i + 6]}")
    else:
        for d, (code, _sev, msg) in zip(diags, want["diagnostics"]):
            if code in REFERENCE_CODES and d.get("message") != msg:
                why.append(f"{code}: message {d.get('message')!r}, model {msg!r}")
    if want["ok"] and got.get("ok"):
        if not isinstance(got.get("owned"), dict):
            why.append("ok but `owned` missing")
        else:
            g, w = normalize_owned(got["owned"]), normalize_owned(want["owned"])
            for k in w:
                if g[k] != w[k]:
                    why.append(f"owned.{k}: cli {_d(g[k])}, model {_d(w[k])}")
    if "plan" not in want:
        extra = [k for k in PLAN_KEYS if k in got]
        if extra:
            why.append(f"CLI prints {extra}, the model makes no plan")
        return why or None
    missing = [k for k in PLAN_KEYS if k not in got]
    if missing:
        why.append(f"CLI lacks {missing}")
        return why
    gm = (got["plan"] or {}).get("modules") if isinstance(got["plan"], dict) else None
    wm = want["plan"]["modules"]
    if not isinstance(gm, dict):
        why.append("plan.modules missing")
    elif list(gm) != list(wm):
        why.append(f"plan entries:\n      cli   {list(gm)}\n      model {list(wm)}")
    else:
        for fqn in wm:
            r = layout_diff(wm[fqn], gm[fqn])
            if r:
                why.append(f"plan entry {fqn!r}: {r}")
    gp, wp = got["provenance"], want["provenance"]
    if not isinstance(gp, dict):
        why.append(f"provenance is not an object: {_d(gp)}")
    elif list(gp) != list(wp):
        why.append(f"provenance entries:\n      cli   {list(gp)}\n      model {list(wp)}")
    else:
        for fqn in wp:
            if gp[fqn] != wp[fqn]:
                why.append(f"provenance of {fqn!r}: cli {_d(gp[fqn])}, model {_d(wp[fqn])}")
    if got["memory"] != want["memory"]:
        gmem, wmem = got["memory"] or {}, want["memory"] or {}
        keys = [k for k in dict.fromkeys(list(wmem) + list(gmem)) if gmem.get(k) != wmem.get(k)]
        why.append("memory: " + "; ".join(f"{k} cli {_d(gmem.get(k))} model {_d(wmem.get(k))}"
                                          for k in keys))
    if got["communication"] != want["communication"]:
        gc, wc = got["communication"], want["communication"]
        extra_g = [r for r in gc if r not in wc] if isinstance(gc, list) else gc
        extra_w = [r for r in wc if r not in gc] if isinstance(gc, list) else wc
        why.append(f"communication ({len(gc) if isinstance(gc, list) else '?'} records, model "
                   f"{len(wc)}):\n      only cli   {_d(extra_g[:4])}\n"
                   f"      only model {_d(extra_w[:4])}")
    if got["collectives"] != want["collectives"]:
        why.append(f"collectives: cli {_d(got['collectives'])}, model {_d(want['collectives'])}")
    return why or None


def main(argv):
    import gen_plan_documents

    return differential.drive(argv, description="Compare `shardplan plan` with the planner model.",
                              default_count=400, command="plan", generate_one=gen_plan_documents.generate_one,
                              run_model=planner.run_file, compare=compare, check_exit=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

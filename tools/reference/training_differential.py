#!/usr/bin/python3
"""Differential test of training memory: `shardplan plan` / `check` against training_reference.py.

Usage:
  python3 training_differential.py --cli PATH DOCS_DIR                 # every *.json in DOCS_DIR
  python3 training_differential.py --cli PATH --seed S --count N [-j J] [--keep DIR]
                                   # N documents of gen_training_documents.py (temp dir or DIR)

For each document, runs `PATH plan --format json DOC` (and, for a document with its own `plan`,
also `PATH check --format json DOC`) and the model, and compares for each run:
  - `ok` (and for `plan` the exit status: 0 when ok, 1 when not);
  - when the model stops before planning (invalid document, an ownership error):
    diagnostics[0]'s code and severity "error", and no `memory.training`;
  - otherwise the presence of `memory.training` and every field: `worst` (device, coordinates
    in mesh order, params, grads, master, optimizer, gathered, activations, total),
    max_total_bytes, min_total_bytes, per_device_total_bytes (exact integers, or null) and
    mean_total_bytes (within 1e-9 relative), with no other key;
  - the diagnostics with codes training-pattern-no-match, exceeds-device-memory and
    near-device-memory: (code, severity, message), in order.
Mismatches are printed with the file name, the command and the first differences; the last line
is `N passed, M failed` (documents); exit status 1 when any failed.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import differential  # noqa: E402
import training_reference as tref  # noqa: E402

TRAINING_CODES = ("training-pattern-no-match", "exceeds-device-memory", "near-device-memory")
WORST_KEYS = ("device", "coordinates", "params", "grads", "master", "optimizer", "gathered",
              "activations", "total")
TRAINING_KEYS = ("worst", "max_total_bytes", "min_total_bytes", "mean_total_bytes",
                 "per_device_total_bytes")


def _d(x):
    return json.dumps(x)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def training_diff(want, got):
    """Reasons `got` (the CLI's memory.training) differs from the model's training result."""
    if not isinstance(got, dict):
        return [f"memory.training is not an object: {_d(got)[:200]}"]
    why = []
    if list(got) != list(TRAINING_KEYS):
        why.append(f"memory.training keys {list(got)}, want {list(TRAINING_KEYS)}")
    gw, ww = got.get("worst"), want["worst"]
    if not isinstance(gw, dict):
        why.append(f"worst is not an object: {_d(gw)}")
    else:
        if list(gw) != list(WORST_KEYS):
            why.append(f"worst keys {list(gw)}, want {list(WORST_KEYS)}")
        for k in WORST_KEYS:
            g, w = gw.get(k), ww[k]
            if k == "coordinates":
                if not isinstance(g, dict) or list(g.items()) != list(w.items()):
                    why.append(f"worst.coordinates cli {_d(g)}, model {_d(w)}")
            elif not _is_int(g) or g != w:
                why.append(f"worst.{k} cli {_d(g)}, model {_d(w)}")
    for k in ("max_total_bytes", "min_total_bytes"):
        g, w = got.get(k), want[k]
        if not _is_int(g) or g != w:
            why.append(f"{k} cli {_d(g)}, model {_d(w)}")
    g, w = got.get("mean_total_bytes"), want["mean_total_bytes"]
    if isinstance(g, bool) or not isinstance(g, (int, float)) or \
            abs(g - w) > 1e-9 * max(1.0, abs(w)):
        why.append(f"mean_total_bytes cli {_d(g)}, model {_d(w)}")
    g, w = got.get("per_device_total_bytes"), want["per_device_total_bytes"]
    if w is None:
        if g is not None:
            why.append("per_device_total_bytes: cli a list, model null")
    elif not isinstance(g, list) or len(g) != len(w) or \
            not all(_is_int(a) and a == b for a, b in zip(g, w)):
        if isinstance(g, list) and len(g) == len(w):
            i = next(i for i, (a, b) in enumerate(zip(g, w)) if not (_is_int(a) and a == b))
            why.append(f"per_device_total_bytes[{i}] cli {_d(g[i])}, model {w[i]}")
        else:
            why.append(f"per_device_total_bytes cli {_d(g)[:200]}, model {len(w)} devices")
    return why


def compare(want, got, command):
    """None when the CLI result of `command` agrees with the model, else a list of reasons."""
    if got.get("schema") != "shardplan.result.v1":
        return [f"schema is {got.get('schema')!r}"]
    diags = got.get("diagnostics")
    if not isinstance(diags, list) or not all(isinstance(d, dict) for d in diags):
        return ["`diagnostics` missing or malformed"]
    why = []
    if got.get("ok") != want["ok"]:
        brief = [(d.get("code"), d.get("severity")) for d in diags
                 if d.get("severity") == "error"][:3]
        why.append(f"ok: cli {got.get('ok')} (errors {brief}), model {want['ok']} "
                   f"(first {want['diagnostics'][0][:2] if want['diagnostics'] else '-'})")
    mem = got.get("memory")
    has = isinstance(mem, dict) and "training" in mem
    if not want["complete"]:
        code, _sev, msg = want["diagnostics"][0]
        if not diags:
            why.append(f"no diagnostics, model first {code}: {msg!r}")
        elif (diags[0].get("code"), diags[0].get("severity")) != (code, "error"):
            why.append(f"diagnostics[0] {diags[0].get('code')} ({diags[0].get('severity')}): "
                       f"{diags[0].get('message')!r}; model {code}: {msg!r}")
        if has:
            why.append(f"CLI prints memory.training; the model stops at {code}")
        return why or None
    if "training" in want and not has:
        why.append("CLI lacks memory.training")
    elif has and "training" not in want:
        why.append("CLI prints memory.training, the model has none")
    elif has:
        why.extend(training_diff(want["training"], mem["training"]))
    gd = [(d.get("code"), d.get("severity"), d.get("message")) for d in diags
          if d.get("code") in TRAINING_CODES]
    wd = [tuple(x) for x in want["training_diagnostics"] if x[0] in TRAINING_CODES]
    if gd != wd:
        i = 0
        while i < min(len(gd), len(wd)) and gd[i] == wd[i]:
            i += 1
        why.append(f"training diagnostics differ at {i}:\n      cli   {gd[i:i + 3]}\n"
                   f"      model {wd[i:i + 3]}")
    return why or None


def has_own_plan(path):
    try:
        with open(path, "rb") as f:
            obj = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(obj, dict) and "plan" in obj


def main(argv):
    import gen_training_documents
    return differential.drive(
        argv, description="Compare `shardplan plan`/`check` training memory with training_reference.py.",
        default_count=400,
        command=lambda path: ["plan"] + (["check"] if has_own_plan(path) else []),
        generate_one=gen_training_documents.generate_one, run_model=tref.run_file, compare=compare,
        check_exit=lambda c: c == "plan")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

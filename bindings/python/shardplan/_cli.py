"""``python -m shardplan``: the ``shardplan`` command line, over the binding.

``python -m shardplan check [OPTIONS] DOC...`` and ``plan`` take the command
line's options (``--format text|json``, ``--max-diagnostics``, ``--color``,
``--werror``, ``--max-paths``, ``--threads``) and print what it prints, with
its exit status: 0 no errors, 1 a document has errors, 2 usage or I/O error.

- ``--format json`` prints the library's result JSON (``sp_result_json``,
  the bytes ``shardplan check --format json`` prints), one line per document;
  with ``--max-diagnostics N`` it lists the diagnostics the command line lists
  (the first three of each group, at most N in all) and renumbers ``listed``.
- ``--format text`` is cli/text_output.cc's text: diagnostics grouped by
  cause with ``DOC:LINE:COL`` (``_locate.py``, a port of the engine's
  pointer locator), help lines, what was left out, the summary line with the
  count per code, and a planned result's memory, training memory,
  collectives and plan table (``text_report``).
- ``--format sarif`` is the command line's alone: this refuses it (status 2).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import sys
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Tuple

from . import _capi
from ._document import Result, Severity, check, plan
from ._errors import ShardplanError, call
from ._locate import locate_pointers, value_end

PROG = "python -m shardplan"

USAGE = f"""\
usage: {PROG} check [OPTIONS] DOC...
       {PROG} plan  [OPTIONS] DOC...
       {PROG} --version

The shardplan command line over the Python binding: the same output and exit
status as `shardplan check` and `shardplan plan` (SARIF is the command line's
alone).
check: checks module-owned sharding layouts of shardplan.v1 documents (and a
final plan when the document has one) and reports every problem at once.
plan: also makes the final plan from the owners, the document's templates and
overrides, checks it and its shapes, and reports per-device memory and the
collectives it implies. DOC may be '-' for standard input.

  --format text       compiler-style diagnostics, grouped by cause, and a
                      summary line (default)
  --format json       the result object, one JSON object per line per document
  --max-diagnostics N show at most N diagnostics, at most 3 of each group (same
                      code at the same declaration), the rest counted; 0 shows
                      every one (default: 50 for text, 0 for json)
  --color WHEN        auto (default: when standard output is a terminal and
                      NO_COLOR is not set), always or never
  --werror            warnings fail the document (exit status 1)
  --max-paths N       refuse documents whose module tree has more than N paths
                      (default 10000000)
  --threads N         worker threads, 0 for all cores (default: all cores);
                      results are the same for every thread count

Exit status: 0 no errors, 1 a document has errors, 2 usage or I/O error.
"""

#: How many diagnostics of a group the text shows when the output is capped.
SHOWN_PER_GROUP = 3
#: Beyond this many devices the engine computes no memory (kMaxMemoryDevices).
MAX_MEMORY_DEVICES = 1 << 24

_OPTIONS = ("--format", "--max-diagnostics", "--color", "--werror", "--max-paths", "--threads", "--help",
            "--version")


# ---- Did you mean (core/text/suggest.cc) -------------------------------------


def _edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions,
    substitutions and swaps of two neighbours, each one edit."""
    a_, b_ = a.encode("utf-8"), b.encode("utf-8")
    d = [[0] * (len(b_) + 1) for _ in range(len(a_) + 1)]
    for i in range(len(a_) + 1):
        d[i][0] = i
    for j in range(len(b_) + 1):
        d[0][j] = j
    for i in range(1, len(a_) + 1):
        for j in range(1, len(b_) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a_[i - 1] != b_[j - 1]))
            if i > 1 and j > 1 and a_[i - 1] == b_[j - 2] and a_[i - 2] == b_[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a_)][len(b_)]


def did_you_mean(word: str, known: Sequence[str]) -> str:
    """"; did you mean 'X'?" for the known word nearest to ``word``, or ""."""
    size = len(word.encode("utf-8"))
    bound = min(max(size // 3, 1), 3)
    best = None
    for candidate in known:
        gap = abs(len(candidate.encode("utf-8")) - size)
        if gap > bound or (best is not None and gap == bound):
            continue
        distance = _edit_distance(word, candidate)
        if distance > bound or (best is not None and distance == bound):
            continue
        best, bound = candidate, distance
    return f"; did you mean '{best}'?" if best is not None else ""


# ---- Text (cli/text_output.cc) ----------------------------------------------


def _paint(color: bool, style: str, text: str) -> str:
    return f"\x1b[{style}m{text}\x1b[0m" if color else text


_BOLD, _BLUE = "1", "1;34"
_SEVERITY_STYLES = {Severity.ERROR: "1;31", Severity.WARNING: "1;33", Severity.INFO: "1;36"}


def _place(pointer: str) -> str:
    return pointer if pointer else "the document's root"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def format_bytes(b: float) -> str:
    """Bytes as the command line prints them: "512 B", "1.50 GiB"."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    u = 0
    while b >= 1024 and u < 5:
        b /= 1024
        u += 1
    return f"{b:.0f} {units[u]}" if u == 0 else f"{b:.2f} {units[u]}"


def shown_diagnostics(result: Result, max_diagnostics: int) -> List[int]:
    """The indexes of the diagnostics the text shows, in its order: group by
    group, at most 3 of a group and ``max_diagnostics`` in all when that is
    not 0 (every one when it is)."""
    capped = max_diagnostics != 0
    shown: List[int] = []
    for g in result.groups:
        for i in (g.listed[:SHOWN_PER_GROUP] if capped else g.listed):
            if capped and len(shown) == max_diagnostics:
                return shown
            shown.append(i)
    return shown


class _Object(dict):
    """A JSON object that also keeps its members in order, duplicates included."""

    pairs: List[Tuple[str, Any]] = []


def _object(pairs: List[Tuple[str, Any]]) -> _Object:
    o = _Object(pairs)
    o.pairs = pairs
    return o


_BYTE_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_INT64_MAX = 2**63 - 1


def byte_size(value: Any) -> Optional[int]:
    """A training section's ``device_memory`` in bytes, as the engine reads it
    (an integer from 1, or "80GiB"; core/model/training.cc ParseByteSize)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 1 <= value <= _INT64_MAX else None
    if not isinstance(value, str):
        return None
    m = re.fullmatch(r"([0-9]+)(?:\.([0-9]+))?(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value, re.ASCII)
    if m is None or len(m.group(1)) + len(m.group(2) or "") > 36:
        return None
    fraction = m.group(2) or ""
    mantissa = int(m.group(1) + fraction)
    size = mantissa * _BYTE_UNITS[m.group(3)] // 10 ** len(fraction)
    return size if 1 <= size <= _INT64_MAX else None


def _device_memory(document: Optional[bytes]) -> Optional[int]:
    """The document's ``training.device_memory`` in bytes, or None."""
    if not document:
        return None
    try:
        # Of a key given twice, the first counts (as the engine reads it).
        doc = json.loads(document, object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    except ValueError:
        return None
    training = doc.get("training") if isinstance(doc, dict) else None
    return byte_size(training.get("device_memory")) if isinstance(training, dict) else None


def _training_lines(training, axes: Sequence[str], device_memory: Optional[int]) -> List[str]:
    """The training memory per device and the worst device's breakdown, with a
    stacked bar against the device's memory (PrintTraining)."""
    t = training
    out = [
        f"training memory per device: min {format_bytes(float(t.min_total_bytes))}, "
        f"mean {format_bytes(t.mean_total_bytes)}, max {format_bytes(float(t.max_total_bytes))}"
    ]
    where = f"device {t.worst_device}"
    if axes:
        where += " (" + ", ".join(f"{a}={c}" for a, c in zip(axes, t.worst_coordinates)) + ")"
    line = f"  worst: {where}"
    if device_memory is not None:
        line += f" of {format_bytes(float(device_memory))}"
    out.append(line)
    width = 50
    scale = float(max(device_memory if device_memory is not None else t.total, t.total))
    bar, filled = "", 0.0
    for name, mark in (("params", "#"), ("grads", "="), ("master", "+"), ("optimizer", "%"),
                       ("gathered", "~"), ("activations", "*")):
        value = getattr(t, name)
        out.append(f"    {mark} {name:<12} {format_bytes(float(value)):>12}")
        if scale > 0:
            filled += float(value)
            upto = int(filled / scale * width + 0.5)
            bar += mark * max(0, upto - len(bar))
    total = f"      {'total':<12} {format_bytes(float(t.total)):>12}"
    if device_memory:
        total += f"  ({100.0 * t.total / device_memory:.0f}% of device_memory)"
    out.append(total)
    out.append(f"    [{bar.ljust(width, '.')}]")
    return out


def _plan_lines(result: Result, data: _Object, training_lines: List[str]) -> List[str]:
    """Memory per device with its histogram, the training memory, the
    collectives and the plan table (PrintPlan)."""
    out = []
    m = result.memory
    if m is not None:
        out.append(
            f"memory per device ({_plural(m.devices, 'device', 'devices')}): "
            f"min {format_bytes(float(m.min_bytes))}, mean {format_bytes(m.mean_bytes)}, "
            f"max {format_bytes(float(m.max_bytes))} (device {m.max_device}); "
            f"unsharded {format_bytes(float(m.unsharded_bytes))}"
        )
        if m.per_device_bytes and m.max_bytes > m.min_bytes:
            bins, width = [0] * 8, 40
            span = float(m.max_bytes - m.min_bytes)
            for b in m.per_device_bytes:
                bins[min(7, int(float(b - m.min_bytes) / span * 8))] += 1
            most = max(bins)
            for i, count in enumerate(bins):
                lo = float(m.min_bytes) + span * i / 8
                out.append(f"  {format_bytes(lo):>12} .. {'#' * (count * width // most)} {count}")
    else:
        out.append(f"memory per device: not computed (more than {MAX_MEMORY_DEVICES} devices)")
    out.extend(training_lines)
    collectives = data.get("collectives") or _object([])
    counts = [f"{c}@{axis} x{n}" for c, axes in collectives.pairs for axis, n in axes.pairs]
    out.append("collectives: " + " ".join(counts) if counts else "collectives: none")
    out.append("plan:")
    modules = (data.get("plan") or {}).get("modules") or _object([])
    for entry, (fqn, layout) in zip(result.plan_entries, modules.pairs):
        shown = fqn or "(root)"
        params = layout.get("params") or _object([])
        if not params.pairs:
            out.append(f"  {shown}  (no parameters)  [{entry.provenance}]")
        for name, placements in params.pairs:
            text = " ".join(f"{axis}={p}" for axis, p in (placements or _object([])).pairs) or "-"
            out.append(f"  {shown}  {name}  {text}  [{entry.provenance}]")
    return out


def text_report(
    result: Result,
    path: str,
    document: Optional[bytes] = None,
    *,
    max_diagnostics: int = 50,
    werror: bool = False,
    color: bool = False,
) -> str:
    """What ``shardplan check``/``plan`` print for ``result`` (of the
    document ``document``, its bytes, named ``path``): the diagnostics shown
    (``shown_diagnostics``) with where each points in the document, help,
    what was left out, the summary line and, for a planned result, the plan.
    Without ``document`` the diagnostics have no line and column, and a
    training bar no device memory."""
    diagnostics = result.diagnostics
    groups = result.groups
    shown = shown_diagnostics(result, max_diagnostics)
    pointers = [diagnostics[i].pointer for i in shown]
    positions: List[Optional[Tuple[int, int]]] = [None] * len(shown)
    if document and any(p is not None for p in pointers):
        positions = locate_pointers(document, [b"-" if p is None else p.encode("utf-8") for p in pointers])
    out: List[str] = []
    next_ = 0  # into shown
    groups_left = diagnostics_left = 0
    for g in groups:
        printed = 0
        last_help = None  # the help printed last in this group
        while next_ < len(shown) and printed < len(g.listed) and shown[next_] == g.listed[printed]:
            d = diagnostics[shown[next_]]
            style = _SEVERITY_STYLES.get(d.severity, _BOLD)
            line = (
                _paint(color, style, f"{d.severity}[{d.code}]") + ": " + _paint(color, _BOLD, d.message) + "\n"
                + "  " + _paint(color, _BLUE, "-->") + " " + path
            )
            at = positions[next_]
            if at is not None:
                line += f":{at[0]}:{at[1]}"
            if d.pointer is not None:
                line += " at " + _place(d.pointer)
            out.append(line)
            # A group's instances often share their help: said once.
            if d.help is not None and (last_help is None or last_help != d.help):
                out.append("  " + _paint(color, _BLUE, "=") + " " + _paint(color, _BOLD, "help") + ": " + d.help)
                last_help = d.help
            printed += 1
            next_ += 1
        if printed == 0:
            groups_left += 1
            diagnostics_left += g.count
        elif g.count > printed:
            line = "  " + _paint(color, _BLUE, "...") + f" and {g.count - printed} more"
            if g.pointer is not None:
                line += " at " + _place(g.pointer)
            out.append(line + f" ({g.count} {g.code} in all)")
    if groups_left > 0:
        out.append(
            _paint(color, _BLUE, "...") + " "
            + _plural(diagnostics_left, "more diagnostic", "more diagnostics") + " in "
            + _plural(groups_left, "group", "groups") + " not shown (--max-diagnostics 0 shows every one)"
        )

    # The summary: errors and warnings, and per code.
    errors = sum(g.count for g in groups if g.severity == Severity.ERROR)
    warnings = sum(g.count for g in groups if g.severity == Severity.WARNING)
    total = sum(g.count for g in groups)
    data: _Object = json.loads(result.json, object_pairs_hook=_object)
    summary = path + ": "
    owned = data.get("owned")
    if result.ok and owned is not None:
        summary += (
            _paint(color, "1;32", "ok") + ": "
            + _plural(len(owned["specs"].pairs), "owner", "owners") + ", "
            + _plural(len(owned["owned_names"]), "owned parameter name", "owned parameter names") + ", "
            + _plural(len(owned["aliases"]), "alias", "aliases")
        )
        if warnings > 0:
            summary += ", " + _plural(warnings, "warning", "warnings")
    else:
        summary += _plural(errors, "error", "errors")
        if warnings > 0:
            summary += ", " + _plural(warnings, "warning", "warnings")
    if total > 1:
        by_code: Dict[str, int] = {}
        for g in groups:
            by_code[g.code] = by_code.get(g.code, 0) + g.count
        summary += " (" + ", ".join(f"{n} {code}" for code, n in by_code.items()) + ")"
    if werror and result.ok and warnings > 0:
        summary += "; " + _paint(color, "1;31", "failed") + ": warnings are errors (--werror)"
    out.append(summary)
    out.extend(memory_lines(result, _device_memory(document)))
    return "\n".join(out) + "\n"


def memory_lines(result: Result, device_memory: Optional[int]) -> List[str]:
    """What follows the summary line: for a planned result the memory per
    device, the training memory, the collectives and the plan table; for a
    document's own plan with a ``training`` section, the training memory.
    ``device_memory``: the training section's, in bytes, for the bar."""
    data: _Object = json.loads(result.json, object_pairs_hook=_object)
    training_lines: List[str] = []
    training = result.training if "training" in (data.get("memory") or {}) else None
    if training is not None:
        axes = [axis for axis, _ in data["memory"]["training"]["worst"]["coordinates"].pairs]
        training_lines = _training_lines(training, axes, device_memory)
    if "plan" in data:
        return _plan_lines(result, data, training_lines)
    return training_lines  # a document's own plan


# ---- JSON ---------------------------------------------------------------------


def result_json(result: Result) -> bytes:
    """The result JSON, as the library writes it (``sp_result_json``)."""
    with result._use() as pointer:
        out = _capi.sp_str()
        call(_capi.lib.sp_result_json, pointer, ctypes.byref(out))
        return _capi.read_bytes(out) or b""


_JSON_HEAD = b'{"schema":"shardplan.result.v1","diagnostics":['


def _elements(text: bytes, p: int) -> Tuple[List[Tuple[int, int]], int]:
    """The (start, end) of each element of the array whose first element (or
    closing bracket) is at ``p`` in the library's compact JSON, and the offset
    past its closing bracket."""
    spans: List[Tuple[int, int]] = []
    while text[p : p + 1] != b"]":
        if spans:
            if text[p : p + 1] != b",":
                raise ValueError(f"unexpected result JSON at byte {p}")
            p += 1
        end = value_end(text, p)
        if end is None:
            raise ValueError(f"unexpected result JSON at byte {p}")
        spans.append((p, end))
        p = end
    return spans, p + 1


def capped_json(result: Result, max_diagnostics: int) -> bytes:
    """The result JSON as ``--format json --max-diagnostics N`` prints it:
    ``N`` = 0 lists every diagnostic; else the diagnostics the command line's
    engine keeps (the first 3 of each group) up to ``N`` of them, with each
    group's ``listed`` renumbered to index that list."""
    full = result_json(result)
    if max_diagnostics == 0:
        return full
    if not full.startswith(_JSON_HEAD):
        raise ValueError("unexpected result JSON: " + full[:80].decode("utf-8", "replace"))
    diagnostics, p = _elements(full, len(_JSON_HEAD))
    ok_key = b',"ok":'
    if not full.startswith(ok_key, p):
        raise ValueError(f"unexpected result JSON at byte {p}")
    ok_end = value_end(full, p + len(ok_key))
    groups_key = b',"groups":['
    if ok_end is None or not full.startswith(groups_key, ok_end):
        raise ValueError(f"unexpected result JSON at byte {p}")
    groups, rest = _elements(full, ok_end + len(groups_key))
    # The engine of the command line makes the first 3 of each group, in
    # evaluation order; the JSON lists the first N of those.
    kept = sorted(i for g in result.groups for i in g.listed[:SHOWN_PER_GROUP])[:max_diagnostics]
    renumber = {old: new for new, old in enumerate(kept)}
    out = [_JSON_HEAD, b",".join(full[diagnostics[i][0] : diagnostics[i][1]] for i in kept), b"]", full[p:ok_end],
           groups_key[:-1], b"["]
    for k, ((start, end), g) in enumerate(zip(groups, result.groups)):
        text = full[start:end]
        cut = text.rfind(b'"listed":[')
        if cut < 0 or not text.endswith(b"]}"):
            raise ValueError("unexpected group in the result JSON: " + text.decode("utf-8", "replace"))
        listed = b",".join(str(renumber[i]).encode() for i in g.listed if i in renumber)
        out.append((b"," if k else b"") + text[: cut + len(b'"listed":[')] + listed + b"]}")
    out.append(b"]")
    out.append(full[rest:])
    return b"".join(out)


# ---- The command ------------------------------------------------------------------


def _usage(problem: str, stderr) -> int:
    stderr.write(f"shardplan: {problem}\n\n{USAGE}")
    return 2


def _option_value(args: Sequence[str], i: int, name: str) -> Tuple[bool, str, int]:
    """``--name VALUE`` (advancing i) or ``--name=VALUE``: (matched, value, i);
    a missing value is ""."""
    arg = args[i]
    if arg == name:
        return True, (args[i + 1] if i + 1 < len(args) else ""), i + 1
    if arg.startswith(name + "="):
        return True, arg[len(name) + 1 :], i
    return False, "", i


def _integer(value: str, signed: bool = False) -> Optional[int]:
    """absl::SimpleAtoi: ASCII whitespace around, a sign, decimal digits."""
    m = re.fullmatch(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)[ \t\n\v\f\r]*", value, re.ASCII)
    if m is None or (m.group(1) == "-" and not signed):
        return None
    n = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    limit = 2**31 if signed else 2**64
    return n if -limit <= n < limit else None


def _read(path: str, stdin: BinaryIO) -> bytes:
    if path == "-":
        try:
            return stdin.read()
        except OSError as e:
            raise OSError(f"cannot read standard input: {os.strerror(e.errno or errno.EIO)}") from e
    try:
        with open(path, "rb") as f:
            return f.read()
    except IsADirectoryError as e:
        raise OSError(f"cannot read '{path}': it is a directory") from e
    except OSError as e:
        raise OSError(f"cannot read '{path}': {os.strerror(e.errno) if e.errno else e}") from e


def _binary(stream):
    return getattr(stream, "buffer", None)


def run(planning: bool, args: Sequence[str], stdout=None, stderr=None, stdin=None) -> int:
    """``check`` (or ``plan``) with the command line's ``args``; the exit status."""
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    stdin = sys.stdin if stdin is None else stdin
    fmt, max_diagnostics, color, werror = "text", None, "auto", False
    max_paths: Optional[int] = None
    threads = 0
    docs: List[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--help", "-h"):
            stdout.write(USAGE)
            return 0
        matched, value, i = _option_value(args, i, "--format")
        if matched:
            if not value:
                return _usage("--format needs a value", stderr)
            if value == "sarif":
                return _usage(f"--format sarif is the shardplan command line's alone, not {PROG}'s", stderr)
            if value not in ("text", "json"):
                return _usage(f"unknown format '{value}'{did_you_mean(value, ['text', 'json', 'sarif'])}", stderr)
            fmt = value
            i += 1
            continue
        matched, value, i = _option_value(args, i, "--max-diagnostics")
        if matched:
            max_diagnostics = _integer(value)
            if max_diagnostics is None:
                return _usage(f"--max-diagnostics needs a non-negative integer, got '{value}'", stderr)
            i += 1
            continue
        matched, value, i = _option_value(args, i, "--color")
        if matched:
            if value not in ("auto", "always", "never"):
                return _usage(
                    f"--color needs auto, always or never, got '{value}'"
                    f"{did_you_mean(value, ['auto', 'always', 'never'])}", stderr)
            color = value
            i += 1
            continue
        if arg == "--werror":
            werror = True
            i += 1
            continue
        matched, value, i = _option_value(args, i, "--max-paths")
        if matched:
            max_paths = _integer(value)
            if not max_paths:
                return _usage(f"--max-paths needs a positive integer, got '{value}'", stderr)
            i += 1
            continue
        matched, value, i = _option_value(args, i, "--threads")
        if matched:
            number = _integer(value, signed=True)
            if number is None or number < 0:
                return _usage(f"--threads needs a non-negative integer, got '{value}'", stderr)
            threads = number
            i += 1
            continue
        if len(arg) > 1 and arg.startswith("-"):
            name = arg.split("=", 1)[0]
            return _usage(f"unknown option '{arg}'{did_you_mean(name, _OPTIONS)}", stderr)
        docs.append(arg)
        i += 1
    if not docs:
        return _usage("no document given", stderr)

    if max_diagnostics is None:
        max_diagnostics = 50 if fmt == "text" else 0
    no_color = os.environ.get("NO_COLOR", "")
    use_color = color == "always" or (color == "auto" and stdout.isatty() and not no_color)
    out = _binary(stdout)
    write = (lambda data: out.write(data)) if out is not None else (
        lambda data: stdout.write(data.decode("utf-8", "replace")))
    stdin_bytes = _binary(stdin) or stdin
    run_document = plan if planning else check
    status = 0
    for path in docs:
        try:
            text = _read(path, stdin_bytes)
        except OSError as e:
            stdout.flush()
            stderr.write(f"shardplan: {e}\n")
            status = 2
            continue
        try:
            result = run_document(text, threads=threads, max_paths=max_paths)
        except ShardplanError as e:
            stdout.flush()
            stderr.write(f"shardplan: {e.message}\n")
            status = 2
            continue
        with result:
            if fmt == "json":
                write(capped_json(result, max_diagnostics) + b"\n")
            else:
                report = text_report(result, path, text, max_diagnostics=max_diagnostics, werror=werror,
                                     color=use_color)
                write(report.encode("utf-8"))
            failed = not result.ok or (werror and any(g.severity == Severity.WARNING for g in result.groups))
        if failed and status == 0:
            status = 1
    stdout.flush()
    return status


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m shardplan``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        return _usage("no command given", sys.stderr)
    if args[0] in ("--help", "-h", "help"):
        sys.stdout.write(USAGE)
        return 0
    if args[0] in ("--version", "version"):
        from . import abi_version, library_version

        sys.stdout.write(f"shardplan {library_version()} (C ABI {abi_version()})\n")
        return 0
    if args[0] in ("check", "plan"):
        return run(args[0] == "plan", args[1:])
    return _usage(
        f"unknown command '{args[0]}'{did_you_mean(args[0], ['check', 'plan', '--version', '--help'])}", sys.stderr)

#!/usr/bin/python3
"""Literal Python model of training memory per device (shared/spec/training-v1.md).

An independent re-statement, written from the spec and the format decisions of issue 39
(the `training` section, the activation formula, the result JSON and the verdict messages), not
from the C++ code, for differential testing of `shardplan plan` / `shardplan check` on documents
with a `training` section. The planner half is `planner_reference.py`, imported unchanged: the
document minus its `training` key is run through it, and the final plan's first declaration of
each parameter (exactly what the planner's memory reads) gives the placements. This file adds:
the `training` section's validation, the model states (params, grads, master copy, optimizer
states, with the ZeRO/FSDP2 padded dim-0 shard), the bytes FSDP gathers, activations, per-device
totals, the worst device and the verdict with its alternatives, all by brute force (every
device, every parameter identity, every alternative recomputed over every device).

Usage:  python3 training_reference.py DOC.json      (prints the model's result, indent 1)

Result: the planner model's result (see planner_reference.py) with
  - `diagnostics` extended by the training diagnostics (after the planner's) and `ok`
    recomputed from them (exceeds-device-memory is an error in `plan`);
  - "training": {"worst": {"device", "coordinates": {axis: c}, "params", "grads", "master",
        "optimizer", "gathered", "activations", "total"}, "max_total_bytes", "min_total_bytes",
        "mean_total_bytes", "per_device_total_bytes": [...] | null}
    present when the document has a `training` section and memory is computed (the CLI prints it
    as `memory.training`);
  - "training_diagnostics": [[code, severity, message], ...]: training-pattern-no-match (one per
    pattern, frozen first, then fsdp_units, document order), then exceeds-device-memory or
    near-device-memory.
An invalid `training` section makes the result `{"complete": false, "ok": false, "diagnostics":
[["invalid-document", "error", "/training/...: ..."]], "training_diagnostics": []}`.

Choices where the spec and the format note leave room (the literal reading of the spec; the
engine should agree or one side should change):
 1. An alternative "fits" when the worst device's new total is at most `device_memory` for
    `exceeds-device-memory`, and not more than headroom x device_memory for
    `near-device-memory` (the change would make the verdict go away).
 2. `near-device-memory`: total > headroom x device_memory, the product taken as a double
    (Python's float product) and compared exactly with the integer total.
 3. W counts an axis of `shard_axes` only when the parameter's placement there is `R` or absent
    (literal): a `P` or an out-of-range `S(d)` on that axis is not counted, although memory
    counts the parameter as replicated there.
 4. `L[0]` and `n` in z are in elements (units x blocks); z = ceil(L[0] / W) * (n / L[0]).
 5. A parameter identity no path from the root reaches (memory counts it) has no FQN: it is
    trained (no frozen pattern can match it) and belongs to the root unit.
 6. Gathered: G_p(u) sums every parameter of the unit, whatever its W, with n the plan-local
    elements; a unit with no parameter gathers 0; the maxima over an empty set are 0.
 7. Dtype names are planner-v1 section 5's (those of the document's `dtype`); `float64`, which
    the format note lists but neither planner-v1 section 5 nor ParseDtype has, is
    invalid-document.
 8. `null` is accepted only where the note says "or null" (master_dtype, grad_dtype, activations,
    activations.tensor_axis); `training: null`, `model: null`, `device_memory: null` and the
    others are invalid-document. `model` without `activations` is validated and unused.
    `micro_batch` and `seq_len` are at most 2^31 - 1. `first_k_dense_replace <= L` is checked
    whatever E; `num_experts_per_tok <= E` only when E > 0.
 9. The `training` section is validated after the rest of the document (the planner's and the
    ownership model's document validation) and before the ownership checks: an invalid section
    is invalid-document even when an owner would fail; an ownership error (the planner model
    stops: "complete" false) gives no training result.
10. A document with its own `plan`: the training result is computed from that plan (first
    declaration in plan order; entries naming no module ignored), by `plan` and by `check`,
    only when every check before it passed (no error diagnostic: ownership, the plan check,
    also when no owner exists and the plan is not checked); both verdicts are warnings there;
    the CLI prints it as `memory.training` (`"memory": {...}` with the parameter memory too).
    For a plan made here it is computed whenever the planner's memory is, also on a plan with
    errors. Memory not computed (more than 2^24 devices): no training result and no verdict
    (the pattern warnings still).
11. Messages: `device D (axis=c, ...)` in mesh order (`device D` alone for an empty mesh);
    GiB = bytes / 2^30 as a double, "%.2f"; headroom printed with "%g" (0.8 -> "0.8", 1 ->
    "1"); the new shard_axes as a Python list repr (['dp', 'ep']), the added axis last;
    alternatives considered in the spec's order, the zero stages from current + 1 up to 3
    (the lowest that fits), the axes in mesh order (the first that fits, size-1 axes included).
12. Training diagnostics follow all of the planner's diagnostics.
"""

import json
import math
import os
import re
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import planner_reference as planner  # noqa: E402
import shardplan_reference as ref  # noqa: E402
from shardplan_reference import InvalidDocument, ShardplanError  # noqa: E402

# planner-v1 section 5: float32/int32 4, float16/bfloat16 2, float8_*/int8/bool 1, int64 8
DTYPE_SIZE = {"float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1,
              "float8_e5m2": 1, "int8": 1, "bool": 1, "int64": 8}
OPTIMIZER_STATES = {"adamw": 2, "adam": 2, "momentum": 1, "sgd": 0, "none": 0}
RECOMPUTE = ("none", "selective", "full")
UNITS = {"B": 1, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3, "TB": 1000 ** 4,
         "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "TiB": 1024 ** 4}
MEMORY_RE = re.compile(r"([0-9]+(?:\.[0-9]+)?)(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)")
PER_DEVICE_LIMIT = 65536
LIMIT_31 = 1 << 31
LIMIT_63 = 1 << 63

TRAINING_KEYS = ("zero", "shard_axes", "optimizer", "optimizer_dtype", "master_dtype",
                 "grad_dtype", "frozen", "fsdp_units", "prefetch", "activations",
                 "device_memory", "headroom", "model")
ACTIVATION_KEYS = ("micro_batch", "seq_len", "recompute", "tensor_axis", "sequence_parallel")
MODEL_KEYS = ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
              "intermediate_size", "gated_mlp", "num_hidden_layers", "vocab_size", "num_experts",
              "num_experts_per_tok", "moe_intermediate_size", "num_shared_experts",
              "first_k_dense_replace")
MODEL_REQUIRED = ("hidden_size", "num_attention_heads", "intermediate_size", "num_hidden_layers",
                  "vocab_size")


# --------------------------------------------------------------------------------------------
# The `training` section
# --------------------------------------------------------------------------------------------

class Model:
    pass


class Activations:
    pass


class Training:
    def __init__(self):
        self.zero = 0
        self.shard_axes = []
        self.optimizer = "adamw"
        self.optimizer_dtype = "float32"
        self.master_dtype = None
        self.grad_dtype = None
        self.frozen = []          # [(index, pattern)]
        self.fsdp_units = []      # [(index, pattern)]
        self.prefetch = 1
        self.activations = None   # Activations or None
        self.model = None         # Model or None
        self.device_memory = None
        self.headroom = 0.8       # the JSON value (int or float)


def _p(base, token):
    return ref._ptr(base, token)


def _int(v, ptr):
    if isinstance(v, bool) or not isinstance(v, int):
        raise InvalidDocument(ptr, "expected an integer")
    return v


def _dtype(v, ptr, nullable):
    if v is None and nullable:
        return None
    if not isinstance(v, str):
        raise InvalidDocument(ptr, "expected a dtype name")
    if v not in DTYPE_SIZE:
        raise InvalidDocument(ptr, f"unknown dtype {v!r}")
    return v


def _patterns(v, ptr):
    if not isinstance(v, list):
        raise InvalidDocument(ptr, "expected an array of patterns")
    out = []
    for i, s in enumerate(v):
        if not isinstance(s, str):
            raise InvalidDocument(_p(ptr, i), "expected a string")
        out.append((i, s))
    return out


def parse_device_memory(v, ptr):
    if isinstance(v, bool):
        raise InvalidDocument(ptr, "expected an integer or a string")
    if isinstance(v, int):
        if not 1 <= v < LIMIT_63:
            raise InvalidDocument(ptr, "device_memory must be at least 1 byte and below 2^63")
        return v
    if not isinstance(v, str):
        raise InvalidDocument(ptr, "expected an integer or a string")
    m = MEMORY_RE.fullmatch(v)
    if m is None:
        raise InvalidDocument(ptr, f"bad memory size {v!r}")
    value = math.floor(Fraction(m.group(1)) * UNITS[m.group(2)])
    if not 1 <= value < LIMIT_63:
        raise InvalidDocument(ptr, f"memory size {v!r} is not at least 1 byte and below 2^63")
    return value


def parse_model(v, ptr):
    if not isinstance(v, dict):
        raise InvalidDocument(ptr, "expected an object")
    for k in v:
        if k not in MODEL_KEYS:
            raise InvalidDocument(_p(ptr, k), f"unknown key {k!r}")
    for k in MODEL_REQUIRED:
        if k not in v:
            raise InvalidDocument(ptr, f"missing required key {k!r}")
    m = Model()
    vals = {}
    for k in MODEL_KEYS:
        if k not in v or k == "gated_mlp":
            continue
        x = _int(v[k], _p(ptr, k))
        low = 0 if k in ("num_experts", "num_shared_experts", "first_k_dense_replace") else 1
        if not low <= x < LIMIT_31:
            raise InvalidDocument(_p(ptr, k), f"{k} must be in [{low}, 2^31)")
        vals[k] = x
    gated = v.get("gated_mlp", True)
    if not isinstance(gated, bool):
        raise InvalidDocument(_p(ptr, "gated_mlp"), "expected a boolean")
    m.h = vals["hidden_size"]
    m.a = vals["num_attention_heads"]
    m.kv = vals.get("num_key_value_heads", m.a)
    m.d = vals.get("head_dim", m.h // m.a)
    if m.d == 0:
        raise InvalidDocument(ptr, "head_dim must be given when hidden_size < num_attention_heads")
    m.f = vals["intermediate_size"]
    m.gated = gated
    m.L = vals["num_hidden_layers"]
    m.v = vals["vocab_size"]
    m.E = vals.get("num_experts", 0)
    m.k = vals.get("num_experts_per_tok", 1)
    m.fe = vals.get("moe_intermediate_size", m.f)
    m.ns = vals.get("num_shared_experts", 0)
    m.first_dense = vals.get("first_k_dense_replace", 0)
    if m.E > 0 and m.k > m.E:
        raise InvalidDocument(_p(ptr, "num_experts_per_tok"), "more experts per token than experts")
    if m.first_dense > m.L:
        raise InvalidDocument(_p(ptr, "first_k_dense_replace"), "more dense layers than layers")
    return m


def parse_activations(v, ptr, mesh):
    if not isinstance(v, dict):
        raise InvalidDocument(ptr, "expected an object or null")
    for k in v:
        if k not in ACTIVATION_KEYS:
            raise InvalidDocument(_p(ptr, k), f"unknown key {k!r}")
    if "seq_len" not in v:
        raise InvalidDocument(ptr, "missing required key 'seq_len'")
    a = Activations()
    a.micro_batch = _int(v.get("micro_batch", 1), _p(ptr, "micro_batch"))
    if not 1 <= a.micro_batch <= LIMIT_31 - 1:
        raise InvalidDocument(_p(ptr, "micro_batch"), "micro_batch must be from 1 to 2^31 - 1")
    a.seq_len = _int(v["seq_len"], _p(ptr, "seq_len"))
    if not 1 <= a.seq_len <= LIMIT_31 - 1:
        raise InvalidDocument(_p(ptr, "seq_len"), "seq_len must be from 1 to 2^31 - 1")
    a.recompute = v.get("recompute", "selective")
    if not isinstance(a.recompute, str) or a.recompute not in RECOMPUTE:
        raise InvalidDocument(_p(ptr, "recompute"), "expected none, selective or full")
    if "tensor_axis" in v:
        ta = v["tensor_axis"]
        if ta is not None:
            if not isinstance(ta, str):
                raise InvalidDocument(_p(ptr, "tensor_axis"), "expected a mesh axis or null")
            if ta not in mesh:
                raise InvalidDocument(_p(ptr, "tensor_axis"), f"{ta!r} is not a mesh axis")
        a.tensor_axis = ta
    else:
        a.tensor_axis = "tp" if "tp" in mesh else None
    sp = v.get("sequence_parallel", False)
    if not isinstance(sp, bool):
        raise InvalidDocument(_p(ptr, "sequence_parallel"), "expected a boolean")
    a.sequence_parallel = sp
    return a


def parse_training(v, mesh):
    """The `training` value -> Training; `mesh` is the (valid) mesh {axis: size}. Raises
    InvalidDocument with pointers under /training."""
    ptr = "/training"
    if not isinstance(v, dict):
        raise InvalidDocument(ptr, "expected an object")
    for k in v:
        if k not in TRAINING_KEYS:
            raise InvalidDocument(_p(ptr, k), f"unknown key {k!r}")
    t = Training()
    if "zero" in v:
        t.zero = _int(v["zero"], _p(ptr, "zero"))
        if t.zero not in (0, 1, 2, 3):
            raise InvalidDocument(_p(ptr, "zero"), "zero must be 0, 1, 2 or 3")
    if "shard_axes" in v:
        sa = v["shard_axes"]
        if not isinstance(sa, list):
            raise InvalidDocument(_p(ptr, "shard_axes"), "expected an array of mesh axes")
        for i, a in enumerate(sa):
            ap = _p(_p(ptr, "shard_axes"), i)
            if not isinstance(a, str):
                raise InvalidDocument(ap, "expected a string")
            if a not in mesh:
                raise InvalidDocument(ap, f"{a!r} is not a mesh axis")
            if a in sa[:i]:
                raise InvalidDocument(ap, f"axis {a!r} given twice")
        t.shard_axes = list(sa)
    else:
        t.shard_axes = ["dp"] if "dp" in mesh else []
    if "optimizer" in v:
        o = v["optimizer"]
        if not isinstance(o, str) or o not in OPTIMIZER_STATES:
            raise InvalidDocument(_p(ptr, "optimizer"), "unknown optimizer")
        t.optimizer = o
    if "optimizer_dtype" in v:
        t.optimizer_dtype = _dtype(v["optimizer_dtype"], _p(ptr, "optimizer_dtype"), False)
    if "master_dtype" in v:
        t.master_dtype = _dtype(v["master_dtype"], _p(ptr, "master_dtype"), True)
    if "grad_dtype" in v:
        t.grad_dtype = _dtype(v["grad_dtype"], _p(ptr, "grad_dtype"), True)
    if "frozen" in v:
        t.frozen = _patterns(v["frozen"], _p(ptr, "frozen"))
    if "fsdp_units" in v:
        t.fsdp_units = _patterns(v["fsdp_units"], _p(ptr, "fsdp_units"))
    if "prefetch" in v:
        t.prefetch = _int(v["prefetch"], _p(ptr, "prefetch"))
        if not 0 <= t.prefetch <= 64:
            raise InvalidDocument(_p(ptr, "prefetch"), "prefetch must be in [0, 64]")
    if "model" in v:
        t.model = parse_model(v["model"], _p(ptr, "model"))
    if v.get("activations") is not None:
        t.activations = parse_activations(v["activations"], _p(ptr, "activations"), mesh)
        if t.model is None:
            raise InvalidDocument(_p(ptr, "activations"), "activations need `model`")
    if "device_memory" in v:
        t.device_memory = parse_device_memory(v["device_memory"], _p(ptr, "device_memory"))
    if "headroom" in v:
        h = v["headroom"]
        if isinstance(h, bool) or not isinstance(h, (int, float)):
            raise InvalidDocument(_p(ptr, "headroom"), "expected a number")
        if not 0 < h <= 1:
            raise InvalidDocument(_p(ptr, "headroom"), "headroom must be in (0, 1]")
        t.headroom = h
    return t


# --------------------------------------------------------------------------------------------
# Patterns (planner-v1 section 1: `*` is one whole segment, everything else literal)
# --------------------------------------------------------------------------------------------

def matches(pattern, fqn):
    return planner.pattern_matches("", pattern, fqn)


# --------------------------------------------------------------------------------------------
# Activations (the format note's formula; bytes per device, the same on every device)
# --------------------------------------------------------------------------------------------

def activation_bytes(m, act, t, recompute=None):
    """ceil(N / t) with N = t x the exact sum: each '/ t_sp' term counted t / t_sp times, each
    '/ t' term once."""
    recompute = act.recompute if recompute is None else recompute
    b, s = act.micro_batch, act.seq_len
    rep = 1 if act.sequence_parallel else t        # t / t_sp
    g = 4 if m.gated else 2
    h, a, kv, d = m.h, m.a, m.kv, m.d

    def shared(x):      # a '/ t_sp' term
        return x * rep

    def split(x):       # a '/ t' term
        return x

    if recompute == "full":
        layer_dense = layer_moe = shared(2 * s * b * h)
    else:
        attention = (shared(3 * s * b * h)                       # LN output, dropout mask
                     + split(2 * s * b * (2 * a * d + 2 * kv * d))  # Q, K, V, out-projection input
                     + shared(4 * s * b * h))                    # the two layer norms' inputs
        if recompute == "none":
            attention += split(5 * a * s * s * b)                # softmax, its mask, dropout output
        dense = shared(3 * s * b * h) + split(2 * s * b * m.f * g)
        moe = (shared(3 * s * b * h) + shared(2 * s * b * m.k * h)
               + split(2 * s * b * m.k * m.fe * g) + split(2 * s * b * (m.ns * m.fe) * g))
        layer_dense = attention + dense
        layer_moe = attention + moe
    n_dense = m.L if m.E == 0 else m.first_dense
    n_moe = m.L - n_dense
    total = n_dense * layer_dense + n_moe * layer_moe
    total += shared(s * b * h)            # embedding dropout mask
    total += shared(4 * s * b * h)        # final norm input, output-projection input
    total += split(4 * s * b * m.v)       # fp32 logits
    return -(-total // t)


# --------------------------------------------------------------------------------------------
# The final plan's placements (what planner_reference's memory reads)
# --------------------------------------------------------------------------------------------

def plan_placements(obj, max_paths=ref.DEFAULT_MAX_PATHS):
    """The document without `training` (already accepted by the planner model, ownership checks
    passed) -> (doc, pd, {id(param): named placements of its first declaration})."""
    base, pd = planner.split_document(obj)
    doc = ref.load(base, max_paths)
    planner._attach_raw_forward(base, doc)
    owned, entries = ref.collect_owned_layouts(doc)
    if pd.has_plan:
        items = []
        for fqn, layout in doc.plan:
            try:
                module = doc.root.get_submodule(fqn)
            except ShardplanError:
                module = None
            items.append((fqn, module, layout, set()))
    else:
        plan = planner.build_plan(doc, pd, owned, entries, planner.Diags())
        items = [(f, pe.module, pe.layout, pe.packed) for f, pe in plan.items()]
    decls = planner.first_declarations(planner.declarations(doc, items))
    return doc, pd, {pid: d[1] for pid, d in decls.items()}


# --------------------------------------------------------------------------------------------
# Per device, by brute force
# --------------------------------------------------------------------------------------------

def coordinates(sizes, device):
    coords = []
    rest = device
    for s in reversed(sizes):
        coords.append(rest % s)
        rest //= s
    coords.reverse()
    return coords


def local_shape(p, named, blocks, axes, sizes, coords):
    """planner-v1 section 5: the parameter's local shape on a device, in elements (None for an
    unknown shape). torch.chunk's rule on each mesh axis in order; P, out-of-range dims and axes
    outside the mesh leave it whole."""
    if p.shape is None:
        return None
    rank = len(p.shape)
    b = blocks.get(p.id) or [1] * rank
    units = [n // bi for n, bi in zip(p.shape, b)]
    for i, axis in enumerate(axes):
        pl = named.get(axis)
        if pl is None or pl.kind != "S" or not -rank <= pl.dim < rank:
            continue
        dim = pl.dim % rank
        n, k, c = units[dim], sizes[i], coords[i]
        chunk = -(-n // k)
        units[dim] = max(0, min(chunk, n - c * chunk))
    return [u * bi for u, bi in zip(units, b)]


class ParamInfo:
    pass


class Totals:
    """Everything the totals need, computed once: per parameter identity its placements, dtype,
    trained flag, FSDP unit and its local shape on every device."""

    def __init__(self, doc, pd, placements, tr):
        self.tr = tr
        self.axes = list(doc.mesh_axes)
        self.sizes = [doc.mesh[a] for a in self.axes]
        self.devices = 1
        for s in self.sizes:
            self.devices *= s
        fqns = {}
        for name, p in doc.root.named_parameters():
            fqns.setdefault(id(p), []).append(name)
        module_paths = [f for f, _ in doc.root.named_modules()]
        unit_paths = {f for f in module_paths if f != ""
                      and any(matches(pat, f) for _, pat in tr.fsdp_units)}
        self.params = []
        for p in doc.parameters.values():
            info = ParamInfo()
            info.p = p
            info.named = placements.get(id(p), {})
            info.size = DTYPE_SIZE[p.dtype]
            info.grad_size = DTYPE_SIZE[tr.grad_dtype or p.dtype]
            names = fqns.get(id(p), [])
            frozen = any(matches(pat, f) for _, pat in tr.frozen for f in names)
            info.trained = tr.optimizer != "none" and not frozen
            unit = ""
            if names:
                segs = names[0].split(".")
                for j in range(1, len(segs)):
                    prefix = ".".join(segs[:j])
                    if prefix in unit_paths:
                        unit = prefix        # the longest wins (prefixes grow)
            info.unit = unit
            info.local = [local_shape(p, info.named, pd.blocks, self.axes, self.sizes,
                                      coordinates(self.sizes, dev))
                          for dev in range(self.devices)]
            self.params.append(info)
        self.act = None
        if tr.activations is not None:
            a = tr.activations
            t = doc.mesh[a.tensor_axis] if a.tensor_axis is not None else 1
            self.t = t
            self.act = {r: activation_bytes(tr.model, a, t, r) for r in RECOMPUTE}

    def shard_width(self, info, shard_axes):
        w = 1
        for a in shard_axes:
            pl = info.named.get(a)
            if pl is None or pl.kind == "R":
                w *= self.sizes[self.axes.index(a)]
        return w

    def breakdown(self, device, zero, shard_axes, recompute):
        tr = self.tr
        states = OPTIMIZER_STATES[tr.optimizer]
        out = {"params": 0, "grads": 0, "master": 0, "optimizer": 0, "gathered": 0,
               "activations": 0}
        gp, gg = {}, {}
        for info in self.params:
            L = info.local[device]
            if L is None:
                continue                                   # unknown shape: 0 bytes
            n = 1
            for x in L:
                n *= x
            w = self.shard_width(info, shard_axes)
            if w > 1 and len(L) >= 1 and L[0] > 0:
                z = -(-L[0] // w) * (n // L[0])
            else:
                z = n
            out["params"] += (z if zero == 3 else n) * info.size
            if info.trained:
                out["grads"] += (z if zero >= 2 else n) * info.grad_size
                if tr.master_dtype is not None:
                    out["master"] += (z if zero >= 1 else n) * DTYPE_SIZE[tr.master_dtype]
                out["optimizer"] += (states * (z if zero >= 1 else n)
                                     * DTYPE_SIZE[tr.optimizer_dtype])
            gp[info.unit] = gp.get(info.unit, 0) + n * info.size
            if info.trained:
                gg[info.unit] = gg.get(info.unit, 0) + n * info.grad_size
        if zero == 3:
            out["gathered"] = ((1 + tr.prefetch) * max(gp.values(), default=0)
                               + max(gg.values(), default=0))
        if self.act is not None:
            out["activations"] = self.act[recompute]
        out["total"] = sum(out.values())
        return out

    def recompute(self):
        return self.tr.activations.recompute if self.tr.activations is not None else "none"

    def worst_total(self, zero, shard_axes, recompute):
        return max(self.breakdown(dev, zero, shard_axes, recompute)["total"]
                   for dev in range(self.devices))


# --------------------------------------------------------------------------------------------
# Verdict
# --------------------------------------------------------------------------------------------

def py_list(names):
    """A list of names as Python prints it (the engine's PyReprList)."""
    return "[" + ", ".join(repr(n) for n in names) + "]"


def gib(x):
    return f"{x / (1 << 30):.2f} GiB"


def number_text(h):
    return "%g" % h


def more_than_headroom(total, headroom, dm):
    """total > headroom x dm: the product of two doubles, compared exactly with the integer."""
    return total > float(headroom) * float(dm)


def verdict(model, tr, worst, coords_text, has_plan):
    dm = tr.device_memory
    if dm is None:
        return None
    total = worst["total"]
    if total > dm:
        code, severity = "exceeds-device-memory", ("warning" if has_plan else "error")
        budget = f"device_memory {gib(dm)} ({dm} bytes)"
    elif more_than_headroom(total, tr.headroom, dm):
        code, severity = "near-device-memory", "warning"
        budget = f"headroom {number_text(tr.headroom)} x device_memory {gib(dm)} ({dm} bytes)"
    else:
        return None
    rc = model.recompute()
    alternatives = []

    def fits(t):
        return t <= dm if code == "exceeds-device-memory" else not more_than_headroom(t, tr.headroom, dm)

    for z in range(tr.zero + 1, 4):
        t = model.worst_total(z, tr.shard_axes, rc)
        if fits(t):
            alternatives.append(f"zero {z} ({gib(t)})")
            break
    for axis in model.axes:
        if axis in tr.shard_axes:
            continue
        axes = tr.shard_axes + [axis]
        t = model.worst_total(tr.zero, axes, rc)
        if fits(t):
            alternatives.append(f"shard_axes {py_list(axes)} ({gib(t)})")
            break
    if tr.activations is not None and rc != "full":
        t = model.worst_total(tr.zero, tr.shard_axes, "full")
        if fits(t):
            alternatives.append(f"recompute 'full' ({gib(t)})")
    if alternatives:
        tail = "; it would fit with: " + ", ".join(alternatives)
    else:
        tail = "; no higher zero stage, added shard axis or full recompute makes it fit"
    where = f"device {worst['device']}" + (f" ({coords_text})" if coords_text else "")
    message = (f"{where} needs {gib(total)} ({total} bytes) for "
               f"training, more than {budget}{tail}")
    return [code, severity, message]


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

def compute(doc, pd, placements, tr):
    """-> (the training result dict and the Totals, or (None, None) when memory is not
    computed)."""
    devices = 1
    for a in doc.mesh_axes:
        devices *= doc.mesh[a]
    if devices > planner.MEMORY_LIMIT:
        return None, None
    model = Totals(doc, pd, placements, tr)
    rc = model.recompute()
    rows = [model.breakdown(dev, tr.zero, tr.shard_axes, rc) for dev in range(model.devices)]
    totals = [r["total"] for r in rows]
    mx = max(totals)
    wdev = totals.index(mx)
    coords = coordinates(model.sizes, wdev)
    worst = {"device": wdev, "coordinates": dict(zip(model.axes, coords))}
    worst.update(rows[wdev])
    result = {"worst": worst, "max_total_bytes": mx, "min_total_bytes": min(totals),
              "mean_total_bytes": sum(totals) / model.devices,
              "per_device_total_bytes": totals if model.devices <= PER_DEVICE_LIMIT else None}
    return result, model


def pattern_warnings(doc, tr):
    out = []
    param_names = [n for n, _ in doc.root.named_parameters()]
    module_paths = [f for f, _ in doc.root.named_modules() if f != ""]
    for i, pat in tr.frozen:
        if not any(matches(pat, n) for n in param_names):
            out.append(["training-pattern-no-match", "warning",
                        f"training.frozen pattern '{pat}' matches no parameter"])
    for i, pat in tr.fsdp_units:
        if not any(matches(pat, f) for f in module_paths):
            out.append(["training-pattern-no-match", "warning",
                        f"training.fsdp_units pattern '{pat}' matches no module"])
    return out


def run_document(obj, max_paths=ref.DEFAULT_MAX_PATHS):
    has_training = isinstance(obj, dict) and "training" in obj
    rest = {k: v for k, v in obj.items() if k != "training"} if has_training else obj
    res = planner.run_document(rest, max_paths)
    res["training_diagnostics"] = []
    if not has_training:
        return res
    if not res["complete"] and res["diagnostics"][0][0] == "invalid-document":
        return res
    try:
        tr = parse_training(obj["training"], rest["mesh"])
    except ShardplanError as e:
        return {"complete": False, "ok": False, "diagnostics": [[e.code, "error", e.message]],
                "training_diagnostics": []}
    if not res["complete"]:
        return res
    doc, pd, placements = plan_placements(rest, max_paths)
    diags = pattern_warnings(doc, tr)
    result, model = None, None
    # A document's own plan: only once every check so far passed.
    if not (pd.has_plan and any(sev == "error" for _, sev, _ in res["diagnostics"])):
        result, model = compute(doc, pd, placements, tr)
    if result is not None:
        res["training"] = result
        coords_text = ", ".join(f"{a}={c}" for a, c in result["worst"]["coordinates"].items())
        v = verdict(model, tr, result["worst"], coords_text, pd.has_plan)
        if v is not None:
            diags.append(v)
    res["training_diagnostics"] = diags
    res["diagnostics"] = res["diagnostics"] + diags
    res["ok"] = not any(s == "error" for _, s, _ in res["diagnostics"])
    return res


def run_text(text, max_paths=ref.DEFAULT_MAX_PATHS):
    try:
        obj = ref.loads_document(text)
    except ShardplanError as e:
        return {"complete": False, "ok": False, "diagnostics": [[e.code, "error", e.message]],
                "training_diagnostics": []}
    return run_document(obj, max_paths)


def run_file(path, max_paths=ref.DEFAULT_MAX_PATHS):
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return {"complete": False, "ok": False,
                "diagnostics": [["invalid-document", "error", f"/: not UTF-8: {e}"]],
                "training_diagnostics": []}
    return run_text(text, max_paths)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("document")
    ap.add_argument("--max-paths", type=int, default=ref.DEFAULT_MAX_PATHS)
    args = ap.parse_args(argv)
    sys.setrecursionlimit(100000)
    print(json.dumps(run_file(args.document, args.max_paths), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""Literal Python model of the planner (shared/spec/planner-v1.md, sections 1-7).

An independent re-statement, written from the spec and docs/planning.md (not from the C++ code),
for differential testing of `shardplan plan`. The ownership half (collect_owned_layouts, the
claims) is the existing model, `shardplan_reference.py`, imported as it is. This file adds:
templates (matching, the style table, axis-by-axis merging), building the final plan with
provenance, overrides, the final-plan checks of shardplan-v1 section 6 reporting every problem
(the engine's "all errors" order and skip rules of docs/semantics.md section 8), the shape checks,
unplanned parameters, memory per device by brute force (every device, every parameter) and the
communication records.

Usage:  python3 planner_reference.py DOC.json      (prints the model's result, indent 1)

Result (a dict):
  {"complete": bool,            # False: only diagnostics[0] is known (the ownership model stops
                                 #   at the first error; the engine reports all of them)
   "ok": bool,
   "diagnostics": [[code, severity, message], ...],
   "owned": {...}               # when ok (the format of shardplan_reference / the CLI)
   "plan": {"modules": {FQN: layout}}, "provenance": {FQN: [...]}, "memory": {...},
   "communication": [...], "collectives": {...}}    # when the plan was made
Messages are the reference's for the ownership codes; the planner's own messages are informal
(the differential compares codes and severities for those).

Decisions of docs/planning.md followed here: `*` is a whole segment (`a*` is literal); the plan's
order (owners in entry order, then template entries as first contributed, overrides in place or
appended); a template entry has params/in_src/in_dst and, where set, out_src/out_dst (no
out_names); a second placement on one axis is template-conflict even when equal (first kept);
unknown-module of an override is reported by the plan check, in plan order; empty-shard rather
than uneven-shard when a dim has fewer units than shards; packed_colwise: 2 x the product of the
sizes of the axes sharding the dim; memory: P, out-of-range dims and axes outside the mesh count
as replicated, unknown shapes 0 bytes, "devices" key, null over 2^24 devices; collectives
"none" (R -> P) and "unsupported" (S -> P, P(op) -> P(op')); unplanned-parameters is an info.

Choices where the spec and the docs are silent (see README.md): "inside an owner's subtree" is
by module identity (the module is in modules(owner) of some owner); one provenance item per
contributing rule and entry; a style without a weight placement contributes nothing to a
parameter match (no entry, no provenance; the rule still matched); a parameter match uses the
Embedding variant when the registering module is an Embedding and keeps packed_colwise's
constraint; a port conflict is one diagnostic; without owners the plan check reports only
unknown-module (shardplan-v1 section 6 runs only with an owner); shape checks once per
parameter and distinct placement, in plan order; memory counts every parameter identity of
`parameters` (reachable or not), unplanned-parameters only those reachable from the root;
`blocks` needs a known shape; a document with its own `plan` is checked as `check` does (no plan
is made; shape findings as warnings, only when an owner exists and the plan check passed).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shardplan_reference as ref  # noqa: E402
from shardplan_reference import (InvalidDocument, Layout, Placement, ShardplanError,  # noqa: E402
                                 full_name)

DTYPE_BYTES = {"float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1,
               "float8_e5m2": 1, "int8": 1, "bool": 1, "int64": 8}
PER_DEVICE_LIMIT = 65536           # per_device_bytes only up to this many devices (spec 5)
MEMORY_LIMIT = 1 << 24             # docs/planning.md 6: more devices -> "memory": null

R = Placement("R")
P = Placement("P", op="sum")


def S(d):
    return Placement("S", dim=d)


# --------------------------------------------------------------------------------------------
# Section 2: the style table
# --------------------------------------------------------------------------------------------

class Style:
    """weight/bias: a Placement or None ('-'); emb_weight: the Embedding weight; in_/out: a
    (src, dst) pair or None ('-'); emb_in: the Embedding input; packed: packed_colwise."""

    def __init__(self, weight, bias, in_, out, emb_weight=None, emb_in=None, packed=False):
        self.weight = weight
        self.bias = bias
        self.in_ = in_
        self.out = out
        self.emb_weight = emb_weight if emb_weight is not None else weight
        self.emb_in = emb_in if emb_in is not None else in_
        self.packed = packed

    def weight_for(self, module):
        return self.emb_weight if module.type_name == "Embedding" else self.weight

    def in_for(self, module):
        return self.emb_in if module.type_name == "Embedding" else self.in_


STYLES = {
    "colwise": Style(S(-2), S(-1), (R, R), (S(-1), S(-1)), emb_weight=S(-1)),
    "colwise_gather_output": Style(S(-2), S(-1), (R, R), (S(-1), R), emb_weight=S(-1)),
    "rowwise": Style(S(-1), R, (S(-1), S(-1)), (P, R), emb_weight=S(-2), emb_in=(R, R)),
    "rowwise_split_input": Style(S(-1), R, (R, S(-1)), (P, R)),
    "embedding_rowwise": Style(S(-2), None, (R, R), (P, R)),
    "embedding_colwise": Style(S(-1), None, (R, R), (S(-1), R)),
    "packed_colwise": Style(S(-2), S(-1), (R, R), (S(-1), S(-1)), packed=True),
    "replicate": Style(R, R, None, None),
    "replicated_with_grad_allreduce": Style(R, R, None, None),
    "sequence_parallel": Style(R, R, (S(1), S(1)), (S(1), S(1))),
    "grouped_gemm": Style(S(0), S(0), None, None),
    "ep_router": Style(R, R, (R, R), (R, R)),
    "moe_tp_experts": Style(None, None, (R, R), (P, R)),
    # beyond planner-v1 (docs/planning.md section 3): transformers 5.x's other names
    "packed_rowwise": Style(S(-1), R, (S(-1), S(-1)), (P, R), packed=True),
    "all_reduce": Style(R, R, None, (P, R)),
    "moe_identity_expert": Style(R, R, None, None),
    "mla_kv_a_proj": Style(R, R, None, None),
    "megamoe_router": Style(R, R, None, None),
    "megamoe_experts": Style(R, R, None, None),
    # transformers 4.x's names that 5.x dropped
    "local_rowwise": Style(S(-1), R, (S(-1), S(-1)), (P, P)),
    "local_packed_rowwise": Style(S(-1), S(-1), (S(-1), S(-1)), (P, P), packed=True),
    "local": Style(R, R, None, None),
    "gather": Style(R, R, None, (P, R)),
}
# 4.x names transformers 5 renamed without change: planned as the 5.x name.
RENAMED = {"colwise_rep": "colwise_gather_output", "rowwise_rep": "rowwise_split_input",
           "local_colwise": "colwise"}
for _old, _new in RENAMED.items():
    STYLES[_old] = STYLES[_new]
# The others' successors in transformers 5, and what changes (legacy-style-name).
REPLACED = {
    "local_rowwise": ("rowwise", "also all-reduces the output (P -> R), as a 'gather' on the parent did"),
    "local_packed_rowwise": ("packed_rowwise",
                             "also all-reduces the output (P -> R), as a 'gather' on the parent did"),
    "gather": ("moe_tp_experts", "plans no weight or bias of the block itself and gives its input port R -> R"),
    "local": (None, None),
}


def legacy_message(pattern, style_name):
    """legacy-style-name's message for a 4.x-only style name, or None."""
    if style_name in RENAMED:
        now = f"transformers 5 calls it {RENAMED[style_name]!r}"
    elif style_name in REPLACED:
        successor, change = REPLACED[style_name]
        now = ("transformers 5 has no such style" if successor is None
               else f"transformers 5 has {successor!r} in its place, which {change}")
    else:
        return None
    return f"template rule {pattern!r} uses {style_name!r}, a transformers 4.x style name: {now}"


# --------------------------------------------------------------------------------------------
# Section 1: document additions (validated here; the ownership model refuses them as unknown)
# --------------------------------------------------------------------------------------------

class Template:
    def __init__(self, index, axis, prefix, rules):
        self.index = index
        self.axis = axis
        self.prefix = prefix
        self.rules = rules          # [(pattern, style name)]


class PlannerDoc:
    def __init__(self):
        self.templates = None       # list of Template, or None when the key is absent
        self.overrides = None       # list of (fqn, Layout), or None
        self.blocks = {}            # parameter id -> list of ints
        self.has_plan = False
        self.pipeline = None        # (prefix, [(module, inputs, outputs)]), or None when absent


def _ptr(base, token):
    return ref._ptr(base, token)


def split_document(obj):
    """Validates the planner-v1 additions of a parsed document and returns (the document without
    them, for the ownership model; PlannerDoc). Raises InvalidDocument."""
    V = ref._Validator
    pd = PlannerDoc()
    if not isinstance(obj, dict):
        raise InvalidDocument("", "expected an object")
    base = dict(obj)
    templates = base.pop("templates", None) if "templates" in base else None
    has_templates = "templates" in obj
    overrides = base.pop("overrides", None) if "overrides" in base else None
    has_overrides = "overrides" in obj
    pipeline = base.pop("pipeline", None)
    has_pipeline = "pipeline" in obj
    pd.has_plan = "plan" in obj
    if pd.has_plan and (has_templates or has_overrides):
        raise InvalidDocument("/templates" if has_templates else "/overrides",
                              "a document gives either 'plan' or 'templates'/'overrides'")
    # Parameters' blocks: strip, validate after the base document's own checks need the shapes.
    params = base.get("parameters")
    raw_blocks = {}
    if isinstance(params, dict):
        nparams = {}
        for pid, spec in params.items():
            if isinstance(spec, dict) and "blocks" in spec:
                spec = dict(spec)
                raw_blocks[pid] = spec.pop("blocks")
            nparams[pid] = spec
        base["parameters"] = nparams
    # The mesh is needed for the template axes; the base validator checks it fully later, so
    # only look at it when it is well formed (a bad mesh is invalid-document either way).
    mesh = base.get("mesh")
    mesh_axes = list(mesh) if isinstance(mesh, dict) else []

    if has_templates:
        V.array(templates, "/templates")
        pd.templates = []
        for i, t in enumerate(templates):
            tp = _ptr("/templates", i)
            V.obj(t, tp, allowed=("axis", "prefix", "rules"), required=("axis", "rules"))
            axis = V.string(t["axis"], _ptr(tp, "axis"))
            if axis not in mesh_axes:
                raise InvalidDocument(_ptr(tp, "axis"), f"template axis {axis!r} is not a mesh axis")
            prefix = V.string(t.get("prefix", ""), _ptr(tp, "prefix"))
            V.obj(t["rules"], _ptr(tp, "rules"))
            rules = []
            for pattern, style in t["rules"].items():
                rp = _ptr(_ptr(tp, "rules"), pattern)
                if pattern == "":
                    raise InvalidDocument(rp, "empty pattern")
                V.string(style, rp)
                if style not in STYLES:
                    raise InvalidDocument(rp, f"unknown style {style!r}")
                rules.append((pattern, style))
            pd.templates.append(Template(i, axis, prefix, rules))
    if has_overrides:
        V.obj(overrides, "/overrides")
        val = ref._Validator(obj, ref.DEFAULT_MAX_PATHS)
        pd.overrides = []
        for fqn, lay in overrides.items():
            lp = _ptr("/overrides", fqn)
            if lay is None:
                raise InvalidDocument(lp, "expected a layout")
            pd.overrides.append((fqn, val.layout(lay, lp, params_nullable=False)))
    if has_pipeline:
        V.obj(pipeline, "/pipeline", allowed=("prefix", "modules"), required=("modules",))
        prefix = V.string(pipeline.get("prefix", ""), "/pipeline/prefix")
        V.obj(pipeline["modules"], "/pipeline/modules")
        stages = []
        for name, entry in pipeline["modules"].items():
            sp = _ptr("/pipeline/modules", name)
            if name == "":
                raise InvalidDocument(sp, "a pipeline module must not be empty")
            if not isinstance(entry, list) or len(entry) != 2:
                raise InvalidDocument(sp, "expected [inputs, outputs]")
            names = []
            for k, part in enumerate(entry):
                V.array(part, _ptr(sp, k))
                names.append([V.string(n, _ptr(_ptr(sp, k), j)) for j, n in enumerate(part)])
            stages.append((name, names[0], names[1]))
        pd.pipeline = (prefix, stages)
    for pid, blocks in raw_blocks.items():
        bp = _ptr(_ptr("/parameters", pid), "blocks")
        V.array(blocks, bp)
        for j, b in enumerate(blocks):
            if V.integer(b, _ptr(bp, j)) <= 0:
                raise InvalidDocument(_ptr(bp, j), "blocks must be positive")
        shape = params[pid].get("shape") if isinstance(params[pid], dict) else None
        if shape is None:
            # one block size per dim: a parameter of unknown shape has no dims to give them to
            raise InvalidDocument(bp, "blocks need a known shape")
        if isinstance(shape, list):
            if len(shape) != len(blocks):
                raise InvalidDocument(bp, "one block size per dimension")
            for j, (n, b) in enumerate(zip(shape, blocks)):
                if isinstance(n, int) and not isinstance(n, bool) and n % b != 0:
                    raise InvalidDocument(_ptr(bp, j), f"dimension {n} is not a multiple of {b}")
        pd.blocks[pid] = list(blocks)
    return base, pd


# --------------------------------------------------------------------------------------------
# Template matching: '*' is exactly one whole path segment, everything else literal
# --------------------------------------------------------------------------------------------

def pattern_matches(prefix, pattern, fqn):
    full = f"{prefix}.{pattern}" if prefix else pattern
    psegs = full.split(".")
    fsegs = fqn.split(".") if fqn else [""]
    if len(psegs) != len(fsegs):
        return False
    for p, f in zip(psegs, fsegs):
        if p == "*":
            if f == "":
                return False
        elif p != f:
            return False
    return True


# --------------------------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------------------------

class PlanEntry:
    def __init__(self, fqn, layout, provenance, module):
        self.fqn = fqn
        self.layout = layout
        self.provenance = provenance
        self.module = module          # None for an unknown FQN
        self.packed = set()           # (param local name, axis) set by packed_colwise
        self.rules = set()            # (template index, pattern) of the contributing rules


class Diags:
    def __init__(self):
        self.items = []

    def add(self, code, severity, message):
        self.items.append([code, severity, message])

    def error(self, code, message):
        self.add(code, "error", message)

    def warning(self, code, message):
        self.add(code, "warning", message)

    def info(self, code, message):
        self.add(code, "info", message)

    def ok(self):
        return not any(s == "error" for _, s, _ in self.items)


def owner_source(entry, doc):
    m = entry.module
    if m.family is not None and m.family.sharding is not None:
        return "owned:family"
    if entry.fqn in {f for f, _ in doc.providers_sharding}:
        return "owned:model"
    return "owned:native"


def build_plan(doc, pd, owned, entries, diags):
    root = doc.root
    plan = {}                      # fqn -> PlanEntry, insertion ordered
    # 1. owners, with their reduced (output-normalized) layouts
    for e in entries.values():
        plan[e.fqn] = PlanEntry(e.fqn, e.layout.copy(), [owner_source(e, doc)], e.module)
    # modules an owner covers: the owners and every module of their subtrees (identities)
    owned_ids = set()
    for e in entries.values():
        for m in e.module.modules():
            owned_ids.add(id(m))
    named_modules = list(root.named_modules())
    named_parameters = list(root.named_parameters())
    module_at = dict(named_modules)

    def entry_for(fqn, module):
        if fqn not in plan:
            plan[fqn] = PlanEntry(fqn, Layout(params={}, in_src={}, in_dst={}), [], module)
        return plan[fqn]

    def contribute(entry, rule_id, tag):
        # one provenance item per contributing rule (a rule matching a module and its
        # parameters, or two parameters of one module, contributes once)
        if rule_id not in entry.rules:
            entry.rules.add(rule_id)
            entry.provenance.append(tag)

    def put(entry, field, key, axis, placement, what):
        m = getattr(entry.layout, field)
        if m is None:
            m = {}
            setattr(entry.layout, field, m)
        named = m.setdefault(key, {})
        if axis in named:
            diags.error("template-conflict", f"{what} of {entry.fqn!r} already has a placement "
                                             f"on {axis!r}")
            return False
        named[axis] = placement
        return True

    def put_port(entry, kind, name, axis, pair):
        # a port is one thing (src -> dst): a second placement on one axis is one conflict
        src_f, dst_f = ("in_src", "in_dst") if kind == "in" else ("out_src", "out_dst")
        for f in (src_f, dst_f):
            if getattr(entry.layout, f) is None:
                setattr(entry.layout, f, {})
        src = getattr(entry.layout, src_f).setdefault(name, {})
        dst = getattr(entry.layout, dst_f).setdefault(name, {})
        if axis in src or axis in dst:
            diags.error("template-conflict", f"port {kind}:{name} of {entry.fqn!r} already has a "
                                             f"placement on {axis!r}")
            return
        src[axis] = pair[0]
        dst[axis] = pair[1]

    # 2. templates
    for t in pd.templates or []:
        for pattern, style_name in t.rules:
            style = STYLES[style_name]
            legacy = legacy_message(pattern, style_name)
            if legacy:
                diags.info("legacy-style-name", legacy)
            tag = f"template:{t.axis}:{pattern}"
            rule_id = (t.index, pattern)
            matched = False
            for fqn, m in named_modules:
                if not pattern_matches(t.prefix, pattern, fqn):
                    continue
                matched = True
                if id(m) in owned_ids:
                    diags.warning("template-skipped-owned",
                                  f"template rule {pattern!r} matches {fqn!r}, whose layout a "
                                  f"module owns")
                    continue
                entry = entry_for(fqn, m)
                contribute(entry, rule_id, tag)
                w = style.weight_for(m)
                if "weight" in m.params and w is not None:
                    if put(entry, "params", "weight", t.axis, w, "parameter 'weight'") \
                            and style.packed:
                        entry.packed.add(("weight", t.axis))
                if "bias" in m.params and style.bias is not None:
                    if put(entry, "params", "bias", t.axis, style.bias, "parameter 'bias'") \
                            and style.packed:
                        entry.packed.add(("bias", t.axis))
                in_pair = style.in_for(m)
                if in_pair is not None:
                    named = [n for n in m.forward_raw if not n.startswith("*")]
                    if named:
                        put_port(entry, "in", named[0], t.axis, in_pair)
                if style.out is not None:
                    put_port(entry, "out", "output", t.axis, style.out)
            for pname, p in named_parameters:
                if not pattern_matches(t.prefix, pattern, pname):
                    continue
                matched = True
                mfqn, _, local = pname.rpartition(".")
                m = module_at[mfqn]
                if id(m) in owned_ids:
                    diags.warning("template-skipped-owned",
                                  f"template rule {pattern!r} matches {pname!r}, whose layout a "
                                  f"module owns")
                    continue
                w = style.weight_for(m)
                if w is not None:
                    # a style without a weight placement ('-') has nothing to apply to a
                    # parameter: no entry, no provenance (the rule still matched)
                    entry = entry_for(mfqn, m)
                    contribute(entry, rule_id, tag)
                    if put(entry, "params", local, t.axis, w, f"parameter {local!r}") \
                            and style.packed:
                        entry.packed.add((local, t.axis))
            if not matched:
                diags.warning("unused-template-rule",
                              f"template rule {pattern!r} ({style_name} on {t.axis!r}) matched "
                              f"no module or parameter")
    # 3. overrides
    for fqn, layout in pd.overrides or []:
        try:
            module = root.get_submodule(fqn)
        except ShardplanError:
            module = None       # unknown-module, reported by the plan check in plan order
        # replaces the entry in place, or is appended
        plan[fqn] = PlanEntry(fqn, layout.copy(), ["override"], module)
    return plan


# --------------------------------------------------------------------------------------------
# shardplan-v1 section 6 on the final plan, every problem reported (docs/semantics.md 8)
# --------------------------------------------------------------------------------------------

def check_ports(layout, module, diags):
    if any(getattr(layout, k) is not None for k in ref.LEGACY_FIELDS):
        diags.error("legacy-injection", "module-owned layouts cannot install legacy compute injection")
    if layout.params is None or layout.in_src is None or layout.in_dst is None:
        diags.error("ports-missing",
                    "module-owned providers must declare params, in_src and in_dst explicitly")
    if layout.in_src is not None and layout.in_dst is not None \
            and set(layout.in_src) != set(layout.in_dst):
        diags.error("ports-mismatch", "module-owned in_src and in_dst must declare the same input names")
    if layout.in_src is not None and not module.forward.has_var_keyword:
        unknown = set(layout.in_src) - set(module.forward.names)
        if unknown:
            diags.error("unknown-forward-input",
                        f"layout declares unknown forward inputs {sorted(unknown)}")
    if layout.out_names is not None and len(set(layout.out_names)) != len(layout.out_names):
        diags.error("duplicate-output-name", "output names must be unique")


def check_placements(layout, mesh_axes, diags):
    seen = []
    for field in ("params", "in_src", "in_dst", "out_src", "out_dst"):
        for named in (getattr(layout, field) or {}).values():
            for axis in named:
                if axis not in mesh_axes and axis not in seen:
                    seen.append(axis)
                    diags.error("unknown-axis",
                                f"module layouts cannot declare storage/unknown axis {axis!r}")
    for named in (layout.params or {}).values():
        if any(p.is_partial() for p in named.values()):
            diags.error("partial-parameter", "parameter source layouts cannot be Partial")


def check_parallel_axes(parallel, mesh_axes, diags):
    seen = []
    for axis in parallel.axes:
        if axis not in mesh_axes and axis not in seen:
            seen.append(axis)
            diags.error("parallel-unknown-axis",
                        f"parallel module declares unknown communication axis {axis!r}")


def validate_plan(doc, owned, entries, plan, diags):
    """The final plan, entry by entry in plan order: an entry whose FQN names no module is
    `unknown-module` (planner-v1 3.3; docs/planning.md 4 lists it among the plan check's
    findings, so it is reported in plan order) and is skipped; then, only when at least one
    owner exists (shardplan-v1 section 6 runs only then, and the planner checks the plan
    "exactly as section 6"), the checks of section 6, reporting every problem."""
    run_section6 = bool(owned.specs)
    by_fqn = {e.fqn: e for e in entries.values()}
    declared = {}
    covered = set()
    for fqn, pe in plan.items():
        module = pe.module
        if module is None:
            diags.error("unknown-module", f"no module at {fqn!r}")
            continue
        if not run_section6:
            continue
        layout = pe.layout
        parameters = dict(module.named_parameters())
        for name, placement in (layout.params or {}).items():
            if name not in parameters:
                continue
            p = parameters[name]
            if id(p) in declared:
                if declared[id(p)] != placement:
                    diags.error("override-shared-conflict",
                                f"explicit overrides give shared parameter "
                                f"{full_name(fqn, name)!r} conflicting layouts")
            else:
                declared[id(p)] = placement
            covered.add(id(p))
        if fqn in owned.specs:
            entry = by_fqn[fqn]
            here = {id(parameters[n]) for n in (layout.params or {}) if n in parameters}
            if any(pid not in here for pid in owned.required[fqn]):
                diags.error("override-removed-ownership",
                            f"final override removed required parameter ownership from {fqn!r}")
            check_ports(layout, module, diags)
            check_placements(layout, doc.mesh_axes, diags)
            if module.family is not None and module.family.cached is not None:
                cached = module.family.cached.sharding
                cparams = cached.params or {}
                same = all(name in cparams and cparams[name] == placement
                           for name, placement in (layout.params or {}).items())
                for k in ("in_src", "in_dst", "out_src", "out_dst", "out_names"):
                    if getattr(layout, k) != getattr(cached, k):
                        same = False
                if not same:
                    diags.error("family-layout-changed",
                                f"final layout for {fqn!r} differs from its applied family layout")
            elif entry.parallel is not None:
                check_parallel_axes(entry.parallel, doc.mesh_axes, diags)
    if run_section6 and any(pid not in covered for pid in owned.expected):
        diags.error("override-removed-coverage",
                    "final layout overrides removed required module-owned parameter coverage")


# --------------------------------------------------------------------------------------------
# Declarations of parameters in the final plan (what the shape checks, memory and the
# unplanned count read)
# --------------------------------------------------------------------------------------------

def declarations(doc, plan_items):
    """plan_items: [(fqn, module or None, layout, packed set)] -> every declaration of a
    parameter in plan order: [(param, named placements, full name, packed axes)]."""
    out = []
    for fqn, module, layout, packed in plan_items:
        if module is None:
            continue
        parameters = dict(module.named_parameters())
        for name, named in (layout.params or {}).items():
            if name in parameters:
                out.append((parameters[name], named, full_name(fqn, name),
                            {a for (n, a) in packed if n == name}))
    return out


def first_declarations(decls):
    """{id(param): declaration}: the placement a parameter has (its first declaration)."""
    out = {}
    for d in decls:
        out.setdefault(id(d[0]), d)
    return out


def distinct_declarations(decls):
    """The declarations the shape checks look at: each parameter once per distinct placement
    (a tied parameter declared twice alike is checked once), in plan order."""
    out = []
    seen = {}
    for d in decls:
        key = tuple(sorted((a, str(p)) for a, p in d[1].items()))
        if key in seen.setdefault(id(d[0]), set()):
            continue
        seen[id(d[0])].add(key)
        out.append(d)
    return out


def units_of(p, blocks):
    b = blocks.get(p.id) or [1] * len(p.shape)
    return [n // bi for n, bi in zip(p.shape, b)], b


# --------------------------------------------------------------------------------------------
# Section 4: shape checks
# --------------------------------------------------------------------------------------------

def shape_checks(doc, decls, blocks, severity_range, diags):
    mesh = doc.mesh
    for p, named, fname, packed in distinct_declarations(decls):
        if p.shape is None:
            continue
        rank = len(p.shape)
        for axis, pl in named.items():
            if pl.kind == "S" and not (-rank <= pl.dim < rank):
                diags.add("shard-dim-out-of-range", severity_range,
                          f"parameter {fname!r} is sharded {pl} on axis {axis!r} but it has "
                          f"rank {rank}")
        units, b = units_of(p, blocks)
        for d in range(rank):
            axes = [a for a, pl in named.items()
                    if a in mesh and pl.kind == "S" and -rank <= pl.dim < rank
                    and pl.dim % rank == d]
            if not axes:
                continue
            k = 1
            for a in axes:
                k *= mesh[a]
            n = units[d]
            # fewer units than shards is empty-shard only, not also uneven-shard (the worked
            # example of docs/planning.md 1: 4 heads under tp=8)
            if n < k:
                diags.warning("empty-shard", f"parameter {fname!r} dim {d} has {n} units but is "
                                             f"split over {k} devices")
            elif any(a in packed for a in axes) and n % (2 * k) != 0:
                diags.warning("uneven-shard", f"parameter {fname!r} dim {d} has {n} units, two "
                                              f"packed halves over {k} devices")
            elif n % k != 0:
                diags.warning("uneven-shard", f"parameter {fname!r} dim {d} has {n} units over "
                                              f"{k} devices")


# --------------------------------------------------------------------------------------------
# Section 5: memory per device, by brute force
# --------------------------------------------------------------------------------------------

def memory(doc, decls, blocks):
    axes = doc.mesh_axes
    sizes = [doc.mesh[a] for a in axes]
    devices = 1
    for s in sizes:
        devices *= s
    if devices > MEMORY_LIMIT:
        return None
    # every parameter identity of the document (`parameters`), reachable from the root or not
    params = list(doc.parameters.values())
    unsharded = 0
    for p in params:
        if p.shape is not None:
            n = 1
            for d in p.shape:
                n *= d
            unsharded += n * DTYPE_BYTES[p.dtype]
    per_device = []
    for dev in range(devices):
        # row-major coordinates over the mesh axes in mesh order
        coords = []
        rest = dev
        for s in reversed(sizes):
            coords.append(rest % s)
            rest //= s
        coords.reverse()
        total = 0
        for p in params:
            if p.shape is None:
                continue
            rank = len(p.shape)
            units, b = units_of(p, blocks)
            local = list(units)
            named = decls[id(p)][1] if id(p) in decls else {}
            for i, axis in enumerate(axes):
                pl = named.get(axis)
                if pl is None or pl.kind != "S" or not (-rank <= pl.dim < rank):
                    continue
                d = pl.dim % rank
                n, k, c = local[d], sizes[i], coords[i]
                chunk = -(-n // k)
                local[d] = max(0, min(chunk, n - c * chunk))
            elems = 1
            for u, bi in zip(local, b):
                elems *= u * bi
            total += elems * DTYPE_BYTES[p.dtype]
        per_device.append(total)
    mx = max(per_device)
    out = {"devices": devices, "unsharded_bytes": unsharded, "max_bytes": mx,
           "min_bytes": min(per_device), "mean_bytes": sum(per_device) / devices,
           "max_device": per_device.index(mx)}
    if devices <= PER_DEVICE_LIMIT:
        out["per_device_bytes"] = per_device
    return out


# --------------------------------------------------------------------------------------------
# Section 6: communication
# --------------------------------------------------------------------------------------------

def collective(src, dst):
    if src.kind == "S" and dst.kind == "R":
        return "all_gather"
    if src.kind == "R" and dst.kind == "S":
        return "slice"
    if src.kind == "P" and dst.kind == "R":
        return "all_reduce"
    if src.kind == "P" and dst.kind == "S":
        return "reduce_scatter"
    if src.kind == "S" and dst.kind == "S":
        return "all_to_all"
    if src.kind == "R" and dst.kind == "P":
        return "none"                  # docs/planning.md 7: not in the spec's table
    return "unsupported"               # S -> P, P(op) -> P(op')


def communication(doc, plan_items):
    records = []
    for fqn, _module, layout, _packed in plan_items:
        for kind, sf, df in (("in", "in_src", "in_dst"), ("out", "out_src", "out_dst")):
            src = getattr(layout, sf) or {}
            dst = getattr(layout, df) or {}
            names = list(src) + [n for n in dst if n not in src]
            for name in names:
                s_named, d_named = src.get(name) or {}, dst.get(name) or {}
                for axis in doc.mesh_axes:
                    a, b = s_named.get(axis, R), d_named.get(axis, R)
                    if a == b:
                        continue
                    records.append({"fqn": fqn, "port": f"{kind}:{name}", "axis": axis,
                                    "from": str(a), "to": str(b), "collective": collective(a, b)})
    counts = {}
    for r in records:
        c = counts.setdefault(r["collective"], {})
        c[r["axis"]] = c.get(r["axis"], 0) + 1
    return records, counts


# --------------------------------------------------------------------------------------------
# Unplanned parameters
# --------------------------------------------------------------------------------------------

def unplanned(doc, decls, diags):
    names = []
    seen = set()
    for name, p in doc.root.named_parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        if id(p) not in decls:
            names.append(name)
    if names:
        diags.info("unplanned-parameters",
                   f"{len(names)} parameters are not planned (replicated): {names[:5]}")


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# The pipeline plan (docs/planning.md, "A pipeline plan"; not planner-v1)
# --------------------------------------------------------------------------------------------

def _takes(m, name):
    """Whether module `m` takes forward input `name`: one of its forward names, any with
    **kwargs, and for a module whose forward has no plain parameter (a container), every child."""
    if name in m.forward.names or m.forward.has_var_keyword:
        return True
    plain = [n for n in m.forward_raw if not n.startswith("*")]
    return not plain and bool(m.children) and all(_takes(c, name) for c in m.children.values())


def _submodule(m, relative):
    for segment in relative.split(".") if relative else []:
        if segment not in m.children:
            return None
        m = m.children[segment]
    return m


def pipeline_checks(doc, pd, severity, diags):
    if pd.pipeline is None:
        return
    prefix, stages = pd.pipeline
    base = _submodule(doc.root, prefix)
    if base is None:
        diags.add("pipeline-unknown-module", severity,
                  f"pipeline plan names module {prefix!r}, which does not exist")
        return
    given = list(base.forward.names)
    for name, inputs, outputs in stages:
        m = _submodule(base, name)
        if m is None:
            fqn = f"{prefix}.{name}" if prefix else name
            diags.add("pipeline-unknown-module", severity,
                      f"pipeline plan names module {fqn!r}, which does not exist")
        else:
            for x in inputs:
                if not _takes(m, x) and x not in given:
                    diags.add("pipeline-unknown-input", severity,
                              f"pipeline stage {name!r} takes {x!r}, which is no forward input of its "
                              f"module or of the model, nor an earlier stage's output")
        given.extend(outputs)


def _attach_raw_forward(doc_obj, doc):
    # the first *named* forward input needs the raw names ('*args' vs 'args')
    for mid, m in doc.modules.items():
        m.forward_raw = list(doc_obj["modules"][mid].get("forward", []))


def run_document(obj, max_paths=ref.DEFAULT_MAX_PATHS):
    diags = Diags()
    try:
        base, pd = split_document(obj)
        doc = ref.load(base, max_paths)
        _attach_raw_forward(base, doc)
        owned, entries = ref.collect_owned_layouts(doc)
    except ShardplanError as e:
        return {"complete": False, "ok": False, "diagnostics": [[e.code, "error", e.message]]}

    if pd.has_plan:
        # `plan` on a document that carries its own final plan: that plan is checked (as `check`
        # does), shape findings are warnings, and no plan is made (no plan keys in the result).
        plan = {}
        for fqn, layout in doc.plan:
            try:
                module = doc.root.get_submodule(fqn)
            except ShardplanError:
                module = None
            plan[fqn] = PlanEntry(fqn, layout, [], module)
        if owned.specs:              # a document's plan: nothing is checked without owners
            validate_plan(doc, owned, entries, plan, diags)
        if owned.specs and diags.ok():   # shape findings only on a plan that was checked and
                                         # passed (no owners: the plan is not checked at all)
            items = [(f, pe.module, pe.layout, pe.packed) for f, pe in plan.items()]
            shape_checks(doc, declarations(doc, items), pd.blocks, "warning", diags)
        pipeline_checks(doc, pd, "warning", diags)
        res = {"complete": True, "ok": diags.ok(), "diagnostics": diags.items}
        if res["ok"]:
            res["owned"] = ref.owned_json(owned)
        return res

    plan = build_plan(doc, pd, owned, entries, diags)
    validate_plan(doc, owned, entries, plan, diags)
    items = [(f, pe.module, pe.layout, pe.packed) for f, pe in plan.items()]
    decls = declarations(doc, items)
    shape_checks(doc, decls, pd.blocks, "error", diags)
    decls = first_declarations(decls)
    unplanned(doc, decls, diags)
    pipeline_checks(doc, pd, "error", diags)
    records, counts = communication(doc, items)
    res = {"complete": True, "ok": diags.ok(), "diagnostics": diags.items}
    if res["ok"]:
        res["owned"] = ref.owned_json(owned)
    res["plan"] = {"modules": {f: ref.layout_json(pe.layout) for f, pe in plan.items()}}
    res["provenance"] = {f: list(pe.provenance) for f, pe in plan.items()}
    res["memory"] = memory(doc, decls, pd.blocks)
    res["communication"] = records
    res["collectives"] = counts
    return res


def run_text(text, max_paths=ref.DEFAULT_MAX_PATHS):
    try:
        obj = ref.loads_document(text)
    except ShardplanError as e:
        return {"complete": False, "ok": False, "diagnostics": [[e.code, "error", e.message]]}
    return run_document(obj, max_paths)


def run_file(path, max_paths=ref.DEFAULT_MAX_PATHS):
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return {"complete": False, "ok": False,
                "diagnostics": [["invalid-document", "error", f"/: not UTF-8: {e}"]]}
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

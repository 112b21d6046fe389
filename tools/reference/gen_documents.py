#!/usr/bin/python3
"""Deterministic random generator of shardplan.v1 documents for differential testing.

Builds llama-like / MoE-like models of the same kinds as shared/conformance/cases (embed_tokens,
a `layers` ModuleList of decoder layers with self_attn q/k/v/o projections (with or without bias,
optional `sinks`), an MLP (gate/up/down, or one `fc` in an MLP module shared between layers),
norms, optional experts ModuleLists, an lm_head often tied to the embedding), declares owners
(model providers, families with or without cached layouts, native binding requests with globs,
root-level "" owners), optionally a final plan, then mutates a share of the documents to aim at
every diagnostic code of shardplan-v1.md section 5 (often several at once) plus a few
invalid documents. Every document is labelled with the reference (shardplan_reference.py).

Usage: python3 gen_documents.py --seed N --count K --out DIR
Same seed and count -> byte-identical files. Files are named NNNNN-LABEL.json where LABEL is the
reference's outcome (`ok` or the error code).
"""

import argparse
import collections
import copy
import fnmatch
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shardplan_reference as ref  # noqa: E402

AXES = ["dp", "tp", "ep", "cp", "pp"]
SIZES = [1, 2, 4, 8]
DTYPES = ["float32", "float16", "bfloat16"]
KINDS = ["tp", "ep", "cp", "none", "mesh"]
NATIVE_PATTERNS = ["layers.*.mlp", "layers.0.mlp", "*norm", "layers.[01].mlp.*", "layers.?.self_attn",
                   "layers.0", "layers.*.mlp.gate_proj", "*.experts", "nor?", "[el]*_*",
                   "layers.*.self_attn.?_proj", "layers.[!0].mlp", "*.experts.[0-1]", "",
                   "embed_tokens", "lm_head", "layers.1.*", "*layernorm"]
CODES = ["multiple-owners", "unknown-module", "parallel-member-undeclared", "unknown-output",
         "native-no-match", "native-overlaps-family", "overlapping-communication",
         "legacy-injection", "ports-missing", "ports-mismatch", "unknown-forward-input",
         "duplicate-output-name", "unknown-axis", "partial-parameter", "parallel-unknown-axis",
         "unknown-parameter", "nested-duplicate", "shared-conflict", "omitted-parameters",
         "override-shared-conflict", "override-removed-ownership", "override-removed-coverage",
         "family-layout-changed"]


# ---------------------------------------------------------------------------------------------
# Model building
# ---------------------------------------------------------------------------------------------

class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.params = {}
        self.modules = {}

    def param(self, shape):
        pid = f"p{len(self.params)}"
        self.params[pid] = {"shape": shape, "dtype": self.rng.choice(DTYPES)}
        if self.rng.random() < 0.01:
            del self.params[pid]["dtype"]
        return pid

    def module(self, type_name, forward, children=None, params=None):
        mid = f"m{len(self.modules)}"
        m = {"type": type_name}
        if forward is not None:
            m["forward"] = forward
        if children:
            m["children"] = children
        if params:
            m["params"] = params
        self.modules[mid] = m
        return mid

    def linear(self, out_f, in_f, bias):
        ps = {"weight": self.param([out_f, in_f])}
        if bias:
            ps["bias"] = self.param([out_f])
        return self.module("Linear", ["input"], params=ps)


def build_model(rng):
    b = Builder(rng)
    h = rng.choice([64, 128])
    embed = b.param([rng.choice([128, 1024]), h])
    emb = b.module("Embedding", ["input"], params={"weight": embed})
    tied = rng.random() < 0.7
    head = b.module("Linear", ["input"], params={"weight": embed if tied else b.param([1024, h])})
    shared_mlp = None
    if rng.random() < 0.3:
        fc = b.linear(h, h, False)
        shared_mlp = b.module("MLP", ["x"], children={"fc": fc})
    layers = []
    for _ in range(rng.randint(1, 4)):
        bias = rng.random() < 0.3
        q, k, v, o = (b.linear(h, h, bias) for _ in range(4))
        aps = {"sinks": b.param([h])} if rng.random() < 0.3 else None
        fwd = rng.choice([["hidden_states", "attention_mask"], ["hidden_states", "**kwargs"],
                          ["x", "*args"], ["hidden_states"]])
        attn = b.module("Attention", fwd,
                        children={"q_proj": q, "k_proj": k, "v_proj": v, "o_proj": o}, params=aps)
        if shared_mlp is not None and rng.random() < 0.6:
            mlp = shared_mlp
        else:
            g, u = b.linear(2 * h, h, False), b.linear(2 * h, h, False)
            d = b.linear(h, 2 * h, False)
            mlp = b.module("MLP", ["x"], children={"gate_proj": g, "up_proj": u, "down_proj": d})
        ln = b.module("RMSNorm", ["x"], params={"weight": b.param([h])})
        ch = {"self_attn": attn, "mlp": mlp, "input_layernorm": ln}
        if rng.random() < 0.3:
            ch["post_attention_layernorm"] = b.module("RMSNorm", ["x"], params={"weight": b.param([h])})
        if rng.random() < 0.4:
            ex = {str(i): b.linear(h, h, False) for i in range(rng.randint(1, 3))}
            ch["experts"] = b.module("ModuleList", [], children=ex)
        layers.append(b.module("DecoderLayer", ["hidden_states", "attention_mask"], children=ch))
    if shared_mlp is not None and not any(shared_mlp in b.modules[l]["children"].values()
                                          for l in layers):
        pass  # left unreachable on purpose sometimes (the cases have unreachable modules)
    lst = b.module("ModuleList", [] if rng.random() < 0.95 else None,
                   children={str(i): l for i, l in enumerate(layers)})
    norm = b.module("RMSNorm", ["x"], params={"weight": b.param([h])})
    root_ch = {"embed_tokens": emb, "layers": lst, "norm": norm}
    if rng.random() < 0.9:
        root_ch["lm_head"] = head
    root = b.module("CausalLM", rng.choice([["input_ids", "**kwargs"], ["input_ids"]]),
                    children=root_ch)
    naxes = rng.choice([1, 1, 2, 2, 3])
    mesh = {a: rng.choice(SIZES) for a in rng.sample(AXES[:4] if rng.random() < 0.9 else AXES, naxes)}
    return {"schema": "shardplan.v1", "mesh": mesh, "parameters": b.params, "root": root,
            "modules": b.modules, "providers": {}}


# ---------------------------------------------------------------------------------------------
# Views of the raw document
# ---------------------------------------------------------------------------------------------

def named_modules(doc, mid=None, prefix=""):
    mid = doc["root"] if mid is None else mid
    yield prefix, mid
    for c, cid in doc["modules"][mid].get("children", {}).items():
        yield from named_modules(doc, cid, f"{prefix}.{c}" if prefix else c)


def named_params(doc, mid):
    out = {}
    for prefix, m in named_modules(doc, mid):
        for local, pid in doc["modules"][m].get("params", {}).items():
            out[f"{prefix}.{local}" if prefix else local] = pid
    return out


def subtree_ids(doc, mid):
    return {m for _, m in named_modules(doc, mid)}


def fwd_inputs(doc, mid):
    fw = doc["modules"][mid].get("forward") or []
    return [n for n in fw if not n.startswith("*")]


def under(name, prefixes):
    return any(name.startswith(p + ".") for p in prefixes)


# ---------------------------------------------------------------------------------------------
# Layouts
# ---------------------------------------------------------------------------------------------

def rand_placement(rng, allow_partial=False):
    r = rng.random()
    if r < 0.35:
        return f"S({rng.choice([0, 1, -1, 0, -2])})"
    if r < 0.75 or not allow_partial:
        return "R"
    return rng.choice(["P", "P(sum)", "P(max)", "P(avg)", "P(min)", "P(prod)"])


def rand_named(rng, mesh, allow_partial=False):
    axes = [a for a in mesh if rng.random() < 0.5]
    rng.shuffle(axes)
    return {a: rand_placement(rng, allow_partial) for a in axes}


class Ctx:
    def __init__(self, rng, doc):
        self.rng = rng
        self.doc = doc
        self.mesh = list(doc["mesh"])
        self.pid_placement = {}
        self.layouts = []   # every layout dict in the document (for mutations)

    def placement_for(self, pid):
        if pid not in self.pid_placement:
            self.pid_placement[pid] = rand_named(self.rng, self.mesh)
        return copy.deepcopy(self.pid_placement[pid])

    def make_layout(self, mid, fqn, child_fqns):
        rng = self.rng
        params = {}
        for local, pid in named_params(self.doc, mid).items():
            full = f"{fqn}.{local}" if fqn else local
            if not under(full, child_fqns):
                params[local] = self.placement_for(pid)
        ins = fwd_inputs(self.doc, mid)
        chosen = [n for n in ins if rng.random() < 0.6]
        in_src = {n: rand_named(rng, self.mesh, True) for n in chosen}
        in_dst = {n: rand_named(rng, self.mesh, True) for n in chosen}
        lay = {"params": params, "in_src": in_src, "in_dst": in_dst}
        r = rng.random()
        if r < 0.35:
            lay["out_src"] = {"output": rand_named(rng, self.mesh, True)}
            lay["out_dst"] = {"output": rand_named(rng, self.mesh, True)}
            if rng.random() < 0.5:
                lay["out_names"] = ["output"]
        elif r < 0.45:
            lay["out_src"] = {"output": rand_named(rng, self.mesh, True)}
            if rng.random() < 0.3:
                lay["out_names"] = ["output", "aux"]
        self.layouts.append(lay)
        return lay

    def parallel(self, kinds=KINDS):
        rng = self.rng
        kind = rng.choice(kinds)
        spec = {"binding_kind": kind}
        if rng.random() < 0.85:
            spec["axes"] = [a for a in self.mesh if rng.random() < 0.5]
        return spec


def declare_owners(ctx):
    rng, doc = ctx.rng, ctx.doc
    paths = list(named_modules(doc))
    first_path = {}
    for fqn, mid in paths:
        first_path.setdefault(mid, fqn)
    mods = doc["modules"]
    taken = set()          # module ids owned
    owner_fqns = []        # canonical fqns of intended owners
    kinds_used = {}        # fqn -> kind (to avoid overlapping communication in most docs)

    def free(mid):
        return mid not in taken

    def safe_kind(fqn):
        # a kind different from every nested/nesting active owner
        bad = {k for f, k in kinds_used.items() if ref.is_child(fqn, f) or ref.is_child(f, fqn)}
        if bad:
            return "none" if ("mesh" in bad or rng.random() < 0.5) else \
                rng.choice([k for k in ["tp", "ep", "cp", "none"] if k not in bad])
        return rng.choice(KINDS)

    candidates = [(f, m) for f, m in paths if mods[m].get("type") not in ("ModuleList",)
                  or rng.random() < 0.1]

    # families
    fam_ids = []
    for f, m in rng.sample(candidates, min(len(candidates), rng.choice([0, 0, 1, 1, 2, 3]))):
        if f == "" or not free(m) or m in fam_ids:
            continue
        fam_ids.append(m)
    family_subtree = set()
    for m in fam_ids:
        family_subtree |= subtree_ids(doc, m)

    # providers
    prov = []
    for f, m in rng.sample(candidates, min(len(candidates), rng.choice([0, 1, 1, 2, 3, 4]))):
        if m in taken or m in fam_ids:
            continue
        if f == "" and rng.random() < 0.7:
            continue
        taken.add(m)
        prov.append((f, m))
    # the families' owners are added after providers
    for m in fam_ids:
        taken.add(m)

    # native requests
    natives = []
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        pats = [rng.choice(NATIVE_PATTERNS) for _ in range(rng.choice([1, 1, 2]))]
        hits = []
        seen = set()
        for p in pats:
            for f, m in paths:
                if fnmatch.fnmatchcase(f, p) and m not in seen:
                    seen.add(m)
                    hits.append((f, m))
        if not hits or any(m in taken for _, m in hits) or \
                any(subtree_ids(doc, m) & family_subtree for _, m in hits):
            if rng.random() < 0.85:
                continue
        for _, m in hits:
            taken.add(m)
        natives.append((pats, hits))

    all_fqns = [f for f, _ in prov] + [first_path[m] for m in fam_ids] + \
        [f for _, hits in natives for f, _ in hits]

    def children_of(fqn):
        return [c for c in all_fqns if ref.is_child(c, fqn)]

    sharding = {}
    for f, m in prov:
        sharding[f] = ctx.make_layout(m, f, children_of(f))
        if rng.random() < 0.5:
            mods[m]["parallel"] = ctx.parallel([safe_kind(f)])
            if mods[m]["parallel"]["binding_kind"] != "none":
                kinds_used[f] = mods[m]["parallel"]["binding_kind"]
    for m in fam_ids:
        f = first_path[m]
        fam = {"parallel": rng.random() < 0.4}
        if rng.random() < 0.15:
            fam["sharding"] = None
        else:
            fam["sharding"] = ctx.make_layout(m, f, children_of(f))
        if fam["parallel"] or rng.random() < 0.4:
            mods[m]["parallel"] = ctx.parallel([safe_kind(f)])
        if rng.random() < 0.3:
            cached_par = ctx.parallel([safe_kind(f)]) if rng.random() < 0.5 else None
            fam["cached"] = {"sharding": ctx.make_layout(m, f, children_of(f)),
                             "parallel": cached_par}
            if cached_par and cached_par["binding_kind"] != "none":
                kinds_used[f] = cached_par["binding_kind"]
            if rng.random() < 0.3 and cached_par is not None:
                cached_par.setdefault("axes", []).append(rng.choice(AXES))  # ignored: cached
        elif fam.get("sharding") is not None and "parallel" in mods[m] \
                and mods[m]["parallel"]["binding_kind"] != "none":
            kinds_used[f] = mods[m]["parallel"]["binding_kind"]
        elif rng.random() < 0.1:
            fam["cached"] = None
        if rng.random() < 0.2:
            del fam["parallel"]
        mods[m]["family"] = fam
    native_docs = []
    for pats, hits in natives:
        if hits:
            f0, m0 = hits[0]
            lay = ctx.make_layout(m0, f0, children_of(f0))
        else:
            lay = ctx.make_layout(doc["root"], "", [])
        par = None
        if rng.random() < 0.5 and hits:
            par = ctx.parallel([safe_kind(hits[0][0])])
            if par["binding_kind"] != "none":
                for f, _ in hits:
                    kinds_used[f] = par["binding_kind"]
        native_docs.append({"match": pats, "sharding": lay, "parallel": par})
    if sharding or rng.random() < 0.5:
        doc["providers"]["sharding"] = sharding
    if native_docs or rng.random() < 0.3:
        doc["providers"]["native"] = native_docs


def add_plan(ctx):
    rng, doc = ctx.rng, ctx.doc
    res = ref.run_document(copy.deepcopy(doc))
    plan = {}
    if res["ok"]:
        specs = res["owned"]["specs"]
        for fqn, spec in specs.items():
            if rng.random() < 0.5:
                plan[fqn] = copy.deepcopy(spec)
            else:
                plan[fqn] = copy.deepcopy(written_layout(doc, fqn) or spec)
    # template-like entries for other modules
    paths = list(named_modules(doc))
    for fqn, mid in rng.sample(paths, min(len(paths), rng.randint(0, 4))):
        if fqn in plan:
            continue
        ps = {l: ctx.placement_for(pid) for l, pid in doc["modules"][mid].get("params", {}).items()}
        plan[fqn] = {"params": ps, "in_src": {}, "in_dst": {}}
    items = list(plan.items())
    if rng.random() < 0.3:
        rng.shuffle(items)
    doc["plan"] = {"modules": dict(items)}


def written_layout(doc, fqn):
    """The layout for `fqn` as written in the document (first source that names it)."""
    pv = doc.get("providers", {})
    mid = None
    for f, m in named_modules(doc):
        if f == fqn:
            mid = m
            break
    if mid is not None:
        fam = doc["modules"][mid].get("family")
        if fam and fam.get("sharding") is not None:
            if fam.get("cached"):
                return fam["cached"]["sharding"]
            return fam["sharding"]
    if fqn in pv.get("sharding", {}):
        return pv["sharding"][fqn]
    for req in pv.get("native", []):
        if any(fnmatch.fnmatchcase(fqn, p) for p in req["match"]):
            return req["sharding"]
    return None


# ---------------------------------------------------------------------------------------------
# Mutations: each aims at one code (the reference decides what actually happens)
# ---------------------------------------------------------------------------------------------

def all_layouts(doc, include_plan=True):
    out = []
    pv = doc.get("providers", {})
    out += [l for l in pv.get("sharding", {}).values() if isinstance(l, dict)]
    out += [r["sharding"] for r in pv.get("native", []) if isinstance(r.get("sharding"), dict)]
    for m in doc["modules"].values():
        fam = m.get("family")
        if fam:
            if isinstance(fam.get("sharding"), dict):
                out.append(fam["sharding"])
            if fam.get("cached"):
                out.append(fam["cached"]["sharding"])
    if include_plan and "plan" in doc:
        out += list(doc["plan"]["modules"].values())
    return out


def pick_layout(ctx, include_plan=False):
    ls = all_layouts(ctx.doc, include_plan)
    return ctx.rng.choice(ls) if ls else None


def owned_fqns(doc):
    res = ref.run_document(copy.deepcopy({k: v for k, v in doc.items() if k != "plan"}))
    return res["owned"]["specs"] if res["ok"] else {}


def m_multiple_owners(ctx):
    rng, doc = ctx.rng, ctx.doc
    paths = list(named_modules(doc))
    by_id = collections.defaultdict(list)
    for f, m in paths:
        by_id[m].append(f)
    shared = [fs for fs in by_id.values() if len(fs) > 1]
    sh = doc["providers"].setdefault("sharding", {})
    if shared and rng.random() < 0.5:
        fs = rng.choice(shared)
        for f in fs[:2]:
            sh[f] = ctx.make_layout(by_id_of(doc, f), f, [])
    else:
        f, m = rng.choice(paths)
        sh[f] = ctx.make_layout(m, f, [])
        doc["providers"].setdefault("native", []).append(
            {"match": [f.replace("0", "?") if rng.random() < 0.5 else f],
             "sharding": ctx.make_layout(m, f, []), "parallel": None})


def by_id_of(doc, fqn):
    for f, m in named_modules(doc):
        if f == fqn:
            return m
    return None


def m_unknown_module(ctx):
    rng, doc = ctx.rng, ctx.doc
    bad = rng.choice(["no.such.module", "layers.9", "layers.0.mlp.gate_proj.weight", "layers.",
                      "Layers.0", ".layers", "layers.0.self_attn.q_proj.bias.x"])
    if "plan" in doc and rng.random() < 0.4:
        doc["plan"]["modules"][bad] = {"params": {}, "in_src": {}, "in_dst": {}}
    else:
        doc["providers"].setdefault("sharding", {})[bad] = {"params": {}, "in_src": {}, "in_dst": {}}


def m_parallel_member_undeclared(ctx):
    fams = [m for m in ctx.doc["modules"].values() if "family" in m]
    if not fams:
        return m_add_family(ctx, parallel=True, declare=False)
    m = ctx.rng.choice(fams)
    m["family"]["parallel"] = True
    m.pop("parallel", None)


def m_add_family(ctx, parallel=None, declare=None, cached=None):
    rng, doc = ctx.rng, ctx.doc
    paths = [(f, m) for f, m in named_modules(doc) if f and "family" not in doc["modules"][m]]
    if not paths:
        return
    f, m = rng.choice(paths)
    fam = {"parallel": rng.random() < 0.5 if parallel is None else parallel,
           "sharding": ctx.make_layout(m, f, [])}
    if cached or (cached is None and rng.random() < 0.3):
        fam["cached"] = {"sharding": ctx.make_layout(m, f, []), "parallel": None}
    if declare or (declare is None and rng.random() < 0.5):
        doc["modules"][m]["parallel"] = ctx.parallel()
    elif declare is False:
        doc["modules"][m].pop("parallel", None)
    doc["modules"][m]["family"] = fam


def m_unknown_output(ctx):
    lay = pick_layout(ctx)
    if lay is None:
        return
    lay["out_src"] = {"output": {}}
    lay["out_names"] = ctx.rng.choice([[], ["other"], ["aux"]])
    if ctx.rng.random() < 0.5:
        lay["out_dst"] = {"output": {}, "extra": {}}


def m_native_no_match(ctx):
    pat = ctx.rng.choice(["nothing.*", "layers.9.mlp", "Layers.*", "layers.0.mlp.[xyz]*",
                          "*.weight", "layers.0.", "layers.[!0-9]"])
    reqs = ctx.doc["providers"].setdefault("native", [])
    lay = ctx.make_layout(ctx.doc["root"], "", [])
    if reqs and ctx.rng.random() < 0.5:
        ctx.rng.choice(reqs)["match"].append(pat)
    else:
        reqs.insert(ctx.rng.randint(0, len(reqs)), {"match": [pat], "sharding": lay, "parallel": None})


def m_native_overlaps_family(ctx):
    rng, doc = ctx.rng, ctx.doc
    if not any("family" in m for m in doc["modules"].values()):
        m_add_family(ctx)
    fam_paths = [(f, m) for f, m in named_modules(doc) if "family" in doc["modules"][m]]
    if not fam_paths:
        return
    f, m = rng.choice(fam_paths)
    target = f.rsplit(".", 1)[0] if "." in f and rng.random() < 0.5 else f
    tm = by_id_of(doc, target)
    doc["providers"].setdefault("native", []).append(
        {"match": [target], "sharding": ctx.make_layout(tm, target, []),
         "parallel": ctx.parallel() if rng.random() < 0.5 else None})


def m_overlapping_communication(ctx):
    rng, doc = ctx.rng, ctx.doc
    paths = [(f, m) for f, m in named_modules(doc) if f.count(".") >= 1]
    if not paths:
        return
    f, m = rng.choice(paths)
    parent = f.rsplit(".", 1)[0]
    if rng.random() < 0.3:
        parent = ""
    pm = by_id_of(doc, parent)
    kind = rng.choice(["tp", "ep", "mesh", "none", "cp"])
    kind2 = kind if rng.random() < 0.6 else rng.choice(["mesh", "tp", "none"])
    sh = doc["providers"].setdefault("sharding", {})
    sh[parent] = ctx.make_layout(pm, parent, [f])
    doc["modules"][pm]["parallel"] = {"binding_kind": kind, "axes": list(ctx.mesh[:1])}
    doc["providers"].setdefault("native", []).append(
        {"match": [f], "sharding": ctx.make_layout(m, f, []),
         "parallel": {"binding_kind": kind2, "axes": []}})


def m_legacy_injection(ctx):
    lay = pick_layout(ctx, include_plan=ctx.rng.random() < 0.3)
    if lay is not None:
        lay[ctx.rng.choice(ref.LEGACY_FIELDS)] = ctx.rng.choice(["fn", "fn", True, 0, False, "", {}])
        if ctx.rng.random() < 0.3:
            lay[ctx.rng.choice(ref.LEGACY_FIELDS)] = None   # explicit null is fine


def m_ports_missing(ctx):
    use_plan = "plan" in ctx.doc and ctx.doc["plan"]["modules"] and ctx.rng.random() < 0.3
    if use_plan:
        lay = ctx.rng.choice(list(ctx.doc["plan"]["modules"].values()))
        keys = ["in_src", "in_dst"]           # a null `params` in a plan is invalid-document
    else:
        lay = pick_layout(ctx)
        keys = ["params", "in_src", "in_dst"]
    if lay is None:
        return
    k = ctx.rng.choice(keys)
    if ctx.rng.random() < 0.5:
        lay[k] = None
    else:
        lay.pop(k, None)


def m_ports_mismatch(ctx):
    lay = pick_layout(ctx, include_plan=ctx.rng.random() < 0.3)
    if lay is None or lay.get("in_src") is None:
        return
    name = ctx.rng.choice(["hidden_states", "x", "input", "attention_mask"])
    lay["in_src"][name] = {}
    if ctx.rng.random() < 0.3 and lay.get("in_dst") is not None:
        lay["in_dst"].pop(name, None)
        lay["in_dst"]["other_" + name] = {}


def m_unknown_forward_input(ctx):
    lay = pick_layout(ctx, include_plan=ctx.rng.random() < 0.2)
    if lay is None or lay.get("in_src") is None or lay.get("in_dst") is None:
        return
    name = ctx.rng.choice(["bogus_input", "args", "kwargs", "*args", "**kwargs", "x",
                           "hidden_states", "input"])
    lay["in_src"][name] = {}
    lay["in_dst"][name] = {}


def m_duplicate_output_name(ctx):
    lay = pick_layout(ctx, include_plan=ctx.rng.random() < 0.2)
    if lay is None:
        return
    lay["out_src"] = {"output": {}}
    lay["out_dst"] = {"output": {}}
    lay["out_names"] = ctx.rng.choice([["output", "output"], ["output", "aux", "output"],
                                       ["aux", "aux", "output"]])


def m_unknown_axis(ctx):
    rng = ctx.rng
    lay = pick_layout(ctx, include_plan=rng.random() < 0.2)
    if lay is None:
        return
    bad = rng.choice([a for a in AXES if a not in ctx.mesh] + ["DP", "storage", ""])
    field = rng.choice(["params", "in_src", "in_dst", "out_src", "out_dst"])
    target = lay.get(field)
    if not target:
        lay[field] = target = {"output" if field.startswith("out") else "x": {}}
    key = rng.choice(list(target))
    target[key][bad] = rand_placement(rng)


def m_partial_parameter(ctx):
    lay = pick_layout(ctx, include_plan=ctx.rng.random() < 0.2)
    if lay is None or not lay.get("params"):
        return
    k = ctx.rng.choice(list(lay["params"]))
    if ctx.mesh:
        lay["params"][k][ctx.rng.choice(ctx.mesh)] = ctx.rng.choice(["P", "P(sum)", "P(max)", "P(avg)"])


def m_parallel_unknown_axis(ctx):
    rng, doc = ctx.rng, ctx.doc
    bad = rng.choice([a for a in AXES if a not in ctx.mesh] + ["world"])
    specs = [m["parallel"] for m in doc["modules"].values() if m.get("parallel")]
    specs += [r["parallel"] for r in doc["providers"].get("native", []) if r.get("parallel")]
    specs += [m["family"]["cached"]["parallel"] for m in doc["modules"].values()
              if m.get("family", {}).get("cached") and m["family"]["cached"].get("parallel")]
    if specs and rng.random() < 0.7:
        rng.choice(specs).setdefault("axes", []).append(bad)
    else:
        paths = [(f, m) for f, m in named_modules(doc)]
        f, m = rng.choice(paths)
        doc["modules"][m]["parallel"] = {"binding_kind": rng.choice(KINDS), "axes": [bad]}
        doc["providers"].setdefault("sharding", {})[f] = ctx.make_layout(m, f, [])


def m_unknown_parameter(ctx):
    lay = pick_layout(ctx)
    if lay is None or lay.get("params") is None:
        return
    name = ctx.rng.choice(["nonexistent.weight", "weight.extra", "bias", "q_proj.weight", "sinks",
                           "mlp.fc.weight", "experts.9.weight", "Weight"])
    lay["params"][name] = {}


def m_nested_duplicate(ctx):
    rng, doc = ctx.rng, ctx.doc
    paths = [(f, m) for f, m in named_modules(doc) if doc["modules"][m].get("params") and "." in f]
    if not paths:
        return
    f, m = rng.choice(paths)
    parent = f.rsplit(".", 1)[0] if rng.random() < 0.6 else f.split(".")[0]
    pm = by_id_of(doc, parent)
    sh = doc["providers"].setdefault("sharding", {})
    sh[f] = ctx.make_layout(m, f, [])
    sh[parent] = ctx.make_layout(pm, parent, [])   # declares the child's parameters too


def m_shared_conflict(ctx):
    rng, doc = ctx.rng, ctx.doc
    sh = doc["providers"].setdefault("sharding", {})
    emb, head = by_id_of(doc, "embed_tokens"), by_id_of(doc, "lm_head")
    if head and doc["modules"][head]["params"]["weight"] == doc["modules"][emb]["params"]["weight"] \
            and rng.random() < 0.6:
        sh["embed_tokens"] = {"params": {"weight": {}}, "in_src": {}, "in_dst": {}}
        sh["lm_head"] = {"params": {"weight": {ctx.mesh[0]: "S(0)"} if ctx.mesh else {"x": "R"}},
                         "in_src": {}, "in_dst": {}}
    else:
        # change one declared placement of an already-owned tied/shared parameter
        lay = pick_layout(ctx)
        if lay and lay.get("params"):
            k = rng.choice(list(lay["params"]))
            lay["params"][k] = {a: "S(-1)" for a in ctx.mesh[:1]}


def m_omitted_parameters(ctx):
    lay = pick_layout(ctx)
    if lay is None or not lay.get("params"):
        return
    for _ in range(ctx.rng.randint(1, 2)):
        if lay["params"]:
            lay["params"].pop(ctx.rng.choice(list(lay["params"])))


def ensure_plan(ctx):
    if "plan" not in ctx.doc:
        add_plan(ctx)
    return ctx.doc["plan"]["modules"]


def m_override_shared_conflict(ctx):
    rng, doc = ctx.rng, ctx.doc
    plan = ensure_plan(ctx)
    paths = [(f, m) for f, m in named_modules(doc) if doc["modules"][m].get("params")]
    by_pid = collections.defaultdict(list)
    for f, m in paths:
        for l, pid in doc["modules"][m]["params"].items():
            by_pid[pid].append((f, l))
    multi = [v for v in by_pid.values() if len(v) > 1]
    if multi and rng.random() < 0.6:
        (f1, l1), (f2, l2) = rng.sample(rng.choice(multi), 2)
    else:
        f1, m = rng.choice(paths)
        l1 = rng.choice(list(doc["modules"][m]["params"]))
        f2, l2 = (f1.rsplit(".", 1)[0], f1.rsplit(".", 1)[1] + "." + l1) if "." in f1 else ("", f1 + "." + l1)
    a = ctx.mesh[0] if ctx.mesh else "dp"
    plan.setdefault(f1, {"params": {}, "in_src": {}, "in_dst": {}})["params"][l1] = {a: "S(0)"}
    plan.setdefault(f2, {"params": {}, "in_src": {}, "in_dst": {}})["params"][l2] = {a: "R"}


def m_override_removed_ownership(ctx):
    plan = ensure_plan(ctx)
    owned = [f for f in plan if plan[f].get("params")]
    if owned:
        lay = plan[ctx.rng.choice(owned)]
        lay["params"].pop(ctx.rng.choice(list(lay["params"])))


def m_override_removed_coverage(ctx):
    plan = ensure_plan(ctx)
    if plan:
        plan.pop(ctx.rng.choice(list(plan)))


def m_family_layout_changed(ctx):
    rng, doc = ctx.rng, ctx.doc
    cached = [(f, m) for f, m in named_modules(doc)
              if (doc["modules"][m].get("family") or {}).get("cached")]
    if not cached:
        m_add_family(ctx, cached=True)
        cached = [(f, m) for f, m in named_modules(doc)
                  if (doc["modules"][m].get("family") or {}).get("cached")]
        if not cached:
            return
    f, m = rng.choice(cached)
    fam = doc["modules"][m]["family"]
    if fam.get("sharding") is None:
        fam["sharding"] = ctx.make_layout(m, f, [])
    plan = ensure_plan(ctx)
    lay = copy.deepcopy(fam["cached"]["sharding"])
    r = rng.random()
    if r < 0.3 and lay.get("params"):
        k = rng.choice(list(lay["params"]))
        lay["params"][k] = {a: "S(1)" for a in ctx.mesh[:1]}
    elif r < 0.5:
        if lay.get("out_src") and "out_names" not in lay:
            lay["out_names"] = list(lay["out_src"])           # normalized form differs as written
        else:
            lay["out_names"] = ["output", "aux"]
    elif r < 0.7:
        lay["in_src"] = dict(lay.get("in_src") or {})
        lay["in_dst"] = dict(lay.get("in_dst") or {})
        for k in list(lay["in_src"]):
            lay["in_src"][k] = {a: "R" for a in ctx.mesh}
    elif r < 0.8:
        lay["out_dst"] = None if lay.get("out_dst") else {}
    # else: unchanged (valid: plan equals the cached layout)
    plan[f] = lay


MUTATIONS = {
    "multiple-owners": m_multiple_owners,
    "unknown-module": m_unknown_module,
    "parallel-member-undeclared": m_parallel_member_undeclared,
    "unknown-output": m_unknown_output,
    "native-no-match": m_native_no_match,
    "native-overlaps-family": m_native_overlaps_family,
    "overlapping-communication": m_overlapping_communication,
    "legacy-injection": m_legacy_injection,
    "ports-missing": m_ports_missing,
    "ports-mismatch": m_ports_mismatch,
    "unknown-forward-input": m_unknown_forward_input,
    "duplicate-output-name": m_duplicate_output_name,
    "unknown-axis": m_unknown_axis,
    "partial-parameter": m_partial_parameter,
    "parallel-unknown-axis": m_parallel_unknown_axis,
    "unknown-parameter": m_unknown_parameter,
    "nested-duplicate": m_nested_duplicate,
    "shared-conflict": m_shared_conflict,
    "omitted-parameters": m_omitted_parameters,
    "override-shared-conflict": m_override_shared_conflict,
    "override-removed-ownership": m_override_removed_ownership,
    "override-removed-coverage": m_override_removed_coverage,
    "family-layout-changed": m_family_layout_changed,
}


# ---------------------------------------------------------------------------------------------
# Invalid documents (returned as text: some can only be written as text)
# ---------------------------------------------------------------------------------------------

def invalid_text(rng, doc):
    doc = copy.deepcopy(doc)
    mods = doc["modules"]
    kind = rng.randrange(17)
    mid = rng.choice(list(mods))
    if kind == 0:
        doc["mesh"][rng.choice(list(doc["mesh"]))] = rng.choice([0, -2, 1.5, "4", True])
    elif kind == 1:
        doc[rng.choice(["templatez", "Plan", "extra", "provider"])] = {}
    elif kind == 2:
        mods[mid][rng.choice(["Type", "forwards", "kids", "param"])] = {}
    elif kind == 3:
        lay = (all_layouts(doc) or [None])[0]
        if lay is None:
            doc["providers"]["sharding"] = {"norm": {"params": {}, "in_src": {}, "in_dst": {},
                                                    "out": {}}}
        else:
            lay["in_srcs"] = {}
    elif kind == 4:
        parent = next(m for m in mods.values() if m.get("children"))
        parent["children"][rng.choice(list(parent["children"]))] = "m_missing"
    elif kind == 5:
        with_params = [m for m in mods.values() if m.get("params")]
        rng.choice(with_params)["params"]["weight"] = "p_missing"
    elif kind == 6:
        # cycle: a leaf gets its ancestor (the root) as a child
        leaf = rng.choice([m for m in mods.values() if not m.get("children")])
        leaf.setdefault("children", {})["loop"] = doc["root"]
    elif kind == 7:
        doc["providers"]["sharding"] = {"norm": {"params": {"weight": {"dp": rng.choice(
            ["S", "S()", "S(x)", "Shard(0)", "r", "P(mean)", "P()", "S(1.0)", " R", "S(0) "])}},
            "in_src": {}, "in_dst": {}}}
    elif kind == 8:
        parent = next(m for m in mods.values() if m.get("children"))
        c = rng.choice(list(parent["children"]))
        parent["children"][rng.choice(["a.b", "", "layers.0"])] = parent["children"].pop(c)
    elif kind == 9:
        m = rng.choice([m for m in mods.values() if m.get("params") and m.get("children")]
                       or [m for m in mods.values() if m.get("params")])
        pid = next(iter(m["params"].values()))
        m.setdefault("children", {})["weight"] = rng.choice(list(mods))
        m["params"]["weight"] = pid
    elif kind == 10:
        doc["plan"] = {"modules": {"norm": {"params": None, "in_src": {}, "in_dst": {}}}}
    elif kind == 11:
        text = json.dumps(doc, indent=1)
        # duplicate key inside the first module object
        return text.replace('"type":', '"type": "Dup",\n   "type":', 1)
    elif kind == 12:
        doc["root"] = rng.choice(["m_missing", 0, None])
    elif kind == 13:
        doc["parameters"][rng.choice(list(doc["parameters"]))][rng.choice(["shape", "dtype"])] = \
            rng.choice([[-1], "64", "float64", None, [64.0]])
    elif kind == 14:
        # exponential number of paths: a chain of modules each holding the next one twice
        prev = None
        for i in range(26):
            ch = {"a": prev, "b": prev} if prev else {}
            mods[f"chain{i}"] = {"type": "Chain", "forward": [], "children": ch}
            prev = f"chain{i}"
        mods[doc["root"]].setdefault("children", {})["chain"] = prev
    elif kind == 15:
        mods[mid]["forward"] = rng.choice(["x", [1], {"x": 1}])
    else:
        doc["schema"] = rng.choice(["shardplan.v2", "", None])
    return json.dumps(doc, indent=1)


# ---------------------------------------------------------------------------------------------

def generate_one(seed, index):
    rng = random.Random(f"shardplan-gen:{seed}:{index}")
    doc = build_model(rng)
    ctx = Ctx(rng, doc)
    declare_owners(ctx)
    if rng.random() < 0.4:
        add_plan(ctx)
    r = rng.random()
    if r < 0.05:
        text = invalid_text(rng, doc)
    else:
        if r >= 0.50:
            for code in rng.sample(CODES, rng.choice([1, 1, 1, 2, 2, 3])):
                MUTATIONS[code](ctx)
        text = json.dumps(doc, indent=1)
    return text + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description="Generate shardplan.v1 documents.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    hist = collections.Counter()
    for i in range(args.count):
        text = generate_one(args.seed, i)
        res = ref.run_text(text)
        label = "ok" if res["ok"] else res["error"]["code"]
        hist[label] += 1
        with open(os.path.join(args.out, f"{i:05d}-{label}.json"), "w") as f:
            f.write(text)
    width = max(len(k) for k in hist) if hist else 0
    for code in ["ok"] + CODES + ["invalid-document"]:
        print(f"{code.ljust(width)} {hist.get(code, 0)}")
    for code in sorted(set(hist) - set(["ok"] + CODES + ["invalid-document"])):
        print(f"{code.ljust(width)} {hist[code]}")
    print(f"total {sum(hist.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""Deterministic random generator of small shardplan.v1 documents for `shardplan plan`.

Each document is a small llama-/MoE-like model (Embedding and Linear modules, attention with
head-sized `blocks`, dense, fused or stacked-expert MLPs, norms, a tied or untied lm_head,
sometimes wrapped in a `model` submodule, sometimes shared submodules or unreachable modules,
forwards with `*args` / `**kwargs`, every dtype, a few unknown or 0-sized shapes) on a mesh of 1-3
axes and at most 64 devices, with owners declared as gen_documents.py does (model providers,
families with or without cached layouts, native requests), then:
  - `templates` (most documents): every style of planner-v1 section 2, module and parameter
    patterns, `*` segments, prefixes (real, absent, with `*`), rules that match nothing, rules
    hitting owned modules, rules and templates that conflict;
  - `overrides` (a third): owner entries kept, changed or broken (a dropped parameter, another
    placement, a legacy field, null ports, an unknown axis, a partial parameter), entries for
    modules no one owns, template entries replaced, unknown FQNs, cached family layouts;
  - a few documents with a final `plan` instead, and a few invalid documents (unknown style, a
    template axis outside the mesh, an empty pattern, `plan` with `templates`, bad `blocks`).

Usage: python3 gen_plan_documents.py --seed N --count K --out DIR
Same seed and count -> byte-identical files, named NNNNN-LABEL.json with the planner model's
outcome (`ok`, or the first error code). Prints a histogram of the diagnostic codes.
"""

import argparse
import collections
import copy
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_documents as gd  # noqa: E402
import planner_reference as planner  # noqa: E402
import shardplan_reference as ref  # noqa: E402

AXES = ["dp", "tp", "ep", "cp"]
AXIS_SIZES = [1, 2, 2, 3, 4, 4, 8]
ALL_DTYPES = list(ref.DTYPES)
STYLE_NAMES = list(planner.STYLES)
LINEAR_FORWARDS = [["input"], ["input"], ["x"], ["*args", "**kwargs"], ["*args", "input"],
                   ["input", "*args"], ["**kwargs"], ["hidden_states", "**kwargs"], []]


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.params = {}
        self.modules = {}

    def param(self, shape, blocks=None):
        rng = self.rng
        pid = f"p{len(self.params)}"
        spec = {}
        r = rng.random()
        if r < 0.04:
            pass                                    # unknown shape (counts 0 bytes)
        else:
            if r < 0.06 and shape:
                shape = list(shape)
                shape[rng.randrange(len(shape))] = 0    # an empty dim
            spec["shape"] = shape
            if blocks is not None and rng.random() < 0.85:
                spec["blocks"] = blocks
        if rng.random() < 0.9:
            spec["dtype"] = rng.choice(ALL_DTYPES)
        self.params[pid] = spec
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

    def linear(self, out_f, in_f, bias, wblocks=None, bblocks=None):
        ps = {"weight": self.param([out_f, in_f], wblocks)}
        if bias:
            ps["bias"] = self.param([out_f], bblocks)
        return self.module("Linear", list(self.rng.choice(LINEAR_FORWARDS)), params=ps)


def make_mesh(rng):
    while True:
        naxes = rng.choice([1, 2, 2, 3, 3])
        mesh = {a: rng.choice(AXIS_SIZES) for a in rng.sample(AXES, naxes)}
        n = 1
        for s in mesh.values():
            n *= s
        if n <= 64:
            return mesh


def build_model(rng):
    b = Builder(rng)
    hd = rng.choice([1, 2, 4])
    nh = rng.choice([2, 3, 4, 6, 8])
    nkv = rng.choice([k for k in (1, 2, 4, nh) if nh % k == 0])
    h = nh * hd
    inter = rng.choice([h, 2 * h, 3 * h])
    vocab = rng.choice([6, 10, 16, 32, 50])
    embed = b.param([vocab, h])
    emb = b.module("Embedding", rng.choice([["input"], ["input_ids"], ["*args", "**kwargs"]]),
                   params={"weight": embed})
    tied = rng.random() < 0.5
    head_w = embed if tied else b.param([vocab, h])
    head_params = {"weight": head_w}
    if rng.random() < 0.15:
        head_params["bias"] = b.param([vocab])
    head = b.module("Linear", list(rng.choice(LINEAR_FORWARDS)), params=head_params)
    shared_mlp = None
    if rng.random() < 0.2:
        shared_mlp = b.module("MLP", ["x"], children={
            "up_proj": b.linear(inter, h, False), "down_proj": b.linear(h, inter, False)})
    layers = []
    for li in range(rng.randint(1, 3)):
        if layers and rng.random() < 0.1:
            layers.append(layers[-1])               # one layer object at two paths
            continue
        bias = rng.random() < 0.3
        q = b.linear(nh * hd, h, bias, [hd, 1], [hd])
        k = b.linear(nkv * hd, h, bias, [hd, 1], [hd])
        v = b.linear(nkv * hd, h, bias, [hd, 1], [hd])
        o = b.linear(h, nh * hd, False, [1, hd])
        aps = {"sinks": b.param([nh])} if rng.random() < 0.2 else None
        fwd = rng.choice([["hidden_states", "attention_mask"], ["hidden_states", "**kwargs"],
                          ["*args", "hidden_states"], ["*args", "**kwargs"], ["x", "*args"]])
        attn = b.module("Attention", fwd,
                        children={"q_proj": q, "k_proj": k, "v_proj": v, "o_proj": o}, params=aps)
        r = rng.random()
        if shared_mlp is not None and r < 0.5:
            mlp = shared_mlp
        elif r < 0.55:
            g, u = b.linear(inter, h, False), b.linear(inter, h, False)
            d = b.linear(h, inter, False)
            mlp = b.module("MLP", rng.choice([["x"], ["*args"], ["hidden_states"]]),
                           children={"gate_proj": g, "up_proj": u, "down_proj": d})
        elif r < 0.75:
            gu = b.linear(2 * inter, h, rng.random() < 0.3)
            d = b.linear(h, inter, False)
            mlp = b.module("MLP", ["x"], children={"gate_up_proj": gu, "down_proj": d})
        else:
            ne = rng.choice([1, 2, 3, 4, 8])
            experts = b.module("GroupedExperts", rng.choice([["x", "routing"], ["*args", "**kwargs"]]),
                               params={"gate_up_proj": b.param([ne, 2 * inter, h]),
                                       "down_proj": b.param([ne, h, inter])})
            gate = b.linear(ne, h, False)
            ch = {"gate": gate, "experts": experts}
            if rng.random() < 0.4:
                ch["shared_experts"] = b.module("MLP", ["x"], children={
                    "up_proj": b.linear(inter, h, False), "down_proj": b.linear(h, inter, False)})
            mlp = b.module("MoE", ["hidden_states"], children=ch)
        ln = b.module("RMSNorm", ["x"], params={"weight": b.param([h])})
        ch = {"self_attn": attn, "mlp": mlp, "input_layernorm": ln}
        if rng.random() < 0.3:
            ch["post_attention_layernorm"] = b.module("RMSNorm", ["x"],
                                                      params={"weight": b.param([h])})
        if rng.random() < 0.1:
            ch["scale"] = b.module("Scale", [], params={"scale": b.param([])})
        layers.append(b.module("DecoderLayer", ["hidden_states", "attention_mask"], children=ch))
    lst = b.module("ModuleList", [], children={str(i): l for i, l in enumerate(layers)})
    norm = b.module("RMSNorm", ["x"], params={"weight": b.param([h])})
    body = {"embed_tokens": emb, "layers": lst, "norm": norm}
    if rng.random() < 0.5:
        inner = b.module("LlamaModel", rng.choice([["input_ids", "**kwargs"], ["*args"]]),
                         children=body)
        root_ch = {"model": inner, "lm_head": head}
    else:
        root_ch = dict(body)
        root_ch["lm_head"] = head
    root = b.module("CausalLM", rng.choice([["input_ids", "**kwargs"], ["input_ids"], []]),
                    children=root_ch,
                    params={"logit_scale": b.param([1])} if rng.random() < 0.1 else None)
    if rng.random() < 0.1:
        b.linear(h, h, True)                        # unreachable: not part of the model
    return {"schema": "shardplan.v1", "mesh": make_mesh(rng), "parameters": b.params,
            "root": root, "modules": b.modules, "providers": {}}


# ---------------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------------

def module_paths(doc):
    return [f for f, _ in gd.named_modules(doc)]


def param_paths(doc):
    return list(gd.named_params(doc, doc["root"]))


def generalize(rng, segs):
    out = []
    for s in segs:
        if s.isdigit() and rng.random() < 0.7:
            out.append("*")
        elif rng.random() < 0.08:
            out.append("*")
        else:
            out.append(s)
    return ".".join(out)


def style_for(rng, target_is_param, name):
    if rng.random() < 0.3:
        return rng.choice(STYLE_NAMES)
    last = name.rsplit(".", 1)[-1]
    table = {
        "q_proj": ["colwise", "colwise", "packed_colwise"], "k_proj": ["colwise"],
        "v_proj": ["colwise"], "o_proj": ["rowwise", "rowwise_split_input"],
        "gate_proj": ["colwise"], "up_proj": ["colwise", "colwise_gather_output"],
        "gate_up_proj": ["packed_colwise", "colwise", "grouped_gemm"],
        "down_proj": ["rowwise", "grouped_gemm", "rowwise_split_input"],
        "embed_tokens": ["embedding_rowwise", "embedding_colwise", "colwise", "rowwise"],
        "lm_head": ["colwise_gather_output", "colwise", "rowwise"],
        "experts": ["grouped_gemm", "moe_tp_experts"], "gate": ["ep_router", "replicate"],
        "norm": ["sequence_parallel", "replicate"], "input_layernorm": ["sequence_parallel"],
        "post_attention_layernorm": ["sequence_parallel", "replicated_with_grad_allreduce"],
        "self_attn": ["replicate", "sequence_parallel"], "mlp": ["moe_tp_experts", "replicate"],
    }
    return rng.choice(table.get(last, STYLE_NAMES))


def touched_modules(prefix, pattern, mods, params):
    out = {m for m in mods if planner.pattern_matches(prefix, pattern, m)}
    out |= {p.rpartition(".")[0] for p in params if planner.pattern_matches(prefix, pattern, p)}
    return out


def make_template(rng, doc, axis, prefixes):
    mods = module_paths(doc)
    params = param_paths(doc)
    prefix = ""
    r = rng.random()
    if r < 0.35 and prefixes:
        prefix = rng.choice(prefixes)
    elif r < 0.42:
        prefix = rng.choice(["nomodel", "layers.*", "*", "model.layers.9", "layers.0.mlp"])
    tmpl = {"axis": axis}
    if prefix or rng.random() < 0.1:
        tmpl["prefix"] = prefix
    psegs = prefix.split(".") if prefix else []

    def under_prefix(path):
        segs = path.split(".") if path else []
        if len(segs) <= len(psegs):
            return None
        for p, s in zip(psegs, segs):
            if p != "*" and p != s:
                return None
        return segs[len(psegs):]

    rules = {}
    seen_touched = set()
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.1:
            pat = rng.choice(["nope", "layers.*.mlp.gate", "layers.*.a*", "*.*.*.*.*.*",
                              "layers.*.self_attn.*_proj", "lm_head.weight.x", "layers..0",
                              "layers.*.mlp.experts.*", "embed_tokens"])
            style = rng.choice(STYLE_NAMES)
        else:
            use_param = r < 0.35
            pool = [s for s in ((under_prefix(p) for p in (params if use_param else mods)))
                    if s]
            if not pool:
                continue
            segs = rng.choice(pool)
            pat = generalize(rng, segs)
            style = style_for(rng, use_param, ".".join(segs))
        touched = touched_modules(prefix, pat, mods, params)
        if touched & seen_touched and rng.random() < 0.75:
            continue            # mostly rules that do not overlap, as real plans are
        seen_touched |= touched
        rules[pat] = style
        if rng.random() < 0.05:
            # the same module twice in one template: a conflict (or nothing when it is owned)
            alt = pat.replace("*", "0") if "*" in pat else None
            if alt and alt not in rules:
                rules[alt] = rng.choice(STYLE_NAMES)
    tmpl["rules"] = rules
    return tmpl


def add_templates(rng, doc):
    axes = list(doc["mesh"])
    mods = module_paths(doc)
    prefixes = sorted({p for p in ("model", "layers", "model.layers", "layers.0", "model.layers.0")
                       if p in mods})
    templates = []
    n = rng.choice([1, 1, 1, 2, 2, 3])
    # mostly one template per axis (as real plans are); sometimes two on one axis
    picks = rng.sample(axes, min(n, len(axes))) if rng.random() < 0.7 else \
        [rng.choice(axes) for _ in range(n)]
    for axis in picks:
        templates.append(make_template(rng, doc, axis, prefixes))
    if rng.random() < 0.1 and templates:
        # a second template on the same axis, some of the same rules with other styles
        t0 = templates[0]
        dup = {"axis": t0["axis"], "rules": {}}
        if "prefix" in t0:
            dup["prefix"] = t0["prefix"]
        for pat in t0["rules"]:
            if rng.random() < 0.6:
                dup["rules"][pat] = rng.choice(STYLE_NAMES)
        templates.append(dup)
    if rng.random() < 0.02:
        templates = []
    doc["templates"] = templates


# ---------------------------------------------------------------------------------------------
# Overrides
# ---------------------------------------------------------------------------------------------

def rand_named(rng, axes, allow_bad=True):
    out = {}
    for a in axes:
        if rng.random() < 0.6:
            x = rng.random()
            if x < 0.45:
                out[a] = f"S({rng.choice([0, 1, -1, -2, 2, -3])})"
            elif x < 0.9 or not allow_bad:
                out[a] = "R"
            else:
                out[a] = rng.choice(["P", "P(max)"])
    if allow_bad and rng.random() < 0.05:
        out["zz"] = "R"                                    # not a mesh axis
    return out


def free_layout(rng, doc, mid, axes):
    mods = doc["modules"]
    locs = list(gd.named_params(doc, mid))
    own = list(mods[mid].get("params", {}))
    names = own + [l for l in locs if l not in own and rng.random() < 0.3]
    params = {n: rand_named(rng, axes) for n in names if rng.random() < 0.85}
    if rng.random() < 0.1:
        params["no_such_param"] = {}
    ins = gd.fwd_inputs(doc, mid)
    chosen = [n for n in ins if rng.random() < 0.6]
    if rng.random() < 0.1:
        chosen.append("extra_input")
    lay = {"params": params,
           "in_src": {n: rand_named(rng, axes) for n in chosen},
           "in_dst": {n: rand_named(rng, axes) for n in chosen}}
    if rng.random() < 0.5:
        lay["out_src"] = {"output": rand_named(rng, axes)}
        lay["out_dst"] = {"output": rand_named(rng, axes)}
        if rng.random() < 0.2:
            lay["out_dst"]["aux"] = rand_named(rng, axes)
    if rng.random() < 0.05:
        lay["in_src"] = None
    return lay


def cached_fqns(doc):
    out = {}
    for f, m in gd.named_modules(doc):
        fam = doc["modules"][m].get("family") or {}
        if fam.get("cached") and fam.get("sharding") is not None and m not in out.values():
            out[f] = m
    return out


def add_overrides(rng, doc):
    axes = list(doc["mesh"])
    res = ref.run_document(copy.deepcopy(doc_without_planner(doc)))
    specs = res["owned"]["specs"] if res["ok"] else {}
    paths = list(gd.named_modules(doc))
    overrides = {}
    for _ in range(rng.choice([1, 1, 2, 3])):
        r = rng.random()
        if r < 0.35 and specs:
            fqn = rng.choice(list(specs))
            lay = copy.deepcopy(specs[fqn])
            x = rng.random()
            if x < 0.15 and lay["params"]:
                lay["params"].pop(rng.choice(list(lay["params"])))
            elif x < 0.3 and lay["params"]:
                k = rng.choice(list(lay["params"]))
                lay["params"][k] = {rng.choice(axes): rng.choice(["S(0)", "S(-1)", "R"])}
            elif x < 0.35:
                lay[rng.choice(ref.LEGACY_FIELDS)] = "fn"
            elif x < 0.4:
                lay[rng.choice(["in_src", "in_dst"])] = None
            elif x < 0.45 and lay["params"]:
                lay["params"][rng.choice(list(lay["params"]))]["zz"] = "R"
            elif x < 0.5 and lay["params"]:
                lay["params"][rng.choice(list(lay["params"]))][rng.choice(axes)] = "P"
            elif x < 0.55:
                lay["in_src"]["bogus"] = {}
            elif x < 0.6:
                lay["out_names"] = ["output", "output"]
            elif x < 0.65:
                written = gd.written_layout(doc, fqn)
                if written is not None:
                    lay = copy.deepcopy(written)
            overrides[fqn] = lay
        elif r < 0.45 and cached_fqns(doc):
            fqn, m = rng.choice(sorted(cached_fqns(doc).items()))
            lay = copy.deepcopy(doc["modules"][m]["family"]["cached"]["sharding"])
            if rng.random() < 0.4 and lay.get("params"):
                k = rng.choice(list(lay["params"]))
                lay["params"][k] = {axes[0]: "S(1)"}
            overrides[fqn] = lay
        elif r < 0.9:
            fqn, mid = rng.choice(paths)
            overrides[fqn] = free_layout(rng, doc, mid, axes)
        else:
            fqn = rng.choice(["nope", "layers.9", "model.layers.0.mlp.weight", "lm_head.weight",
                              "layers.0.self_attn.q_proj.x", "Model"])
            overrides[fqn] = {"params": {}, "in_src": {}, "in_dst": {}}
            if rng.random() < 0.5:
                overrides[fqn] = {"params": {"weight": rand_named(rng, axes)},
                                  "in_src": {"x": rand_named(rng, axes)},
                                  "in_dst": {"x": rand_named(rng, axes)},
                                  "out_src": {"output": rand_named(rng, axes)}}
    if rng.random() < 0.03:
        overrides = {}
    if rng.random() < 0.2:
        items = list(overrides.items())
        rng.shuffle(items)
        overrides = dict(items)
    doc["overrides"] = overrides


def doc_without_planner(doc):
    d = {k: v for k, v in doc.items() if k not in ("templates", "overrides", "plan")}
    d["parameters"] = {pid: {k: v for k, v in spec.items() if k != "blocks"}
                       for pid, spec in doc["parameters"].items()}
    return d


# ---------------------------------------------------------------------------------------------
# Invalid documents
# ---------------------------------------------------------------------------------------------

def make_invalid(rng, doc):
    kind = rng.randrange(10)
    if not doc.get("templates"):
        doc["templates"] = [make_template(rng, doc, rng.choice(list(doc["mesh"])), [])]
    t = doc["templates"][0]
    if kind == 0:
        pat = next(iter(t["rules"]), "x")
        t["rules"][pat] = rng.choice(["Colwise", "colwise_repp", "", "rowise"])
    elif kind == 1:
        t["axis"] = rng.choice(["pp", "TP", ""])
    elif kind == 2:
        t["rules"][""] = "colwise"
    elif kind == 3:
        doc["plan"] = {"modules": {}}
    elif kind == 4:
        shaped = [p for p in doc["parameters"].values() if p.get("shape")]
        if shaped:
            p = rng.choice(shaped)
            p["blocks"] = rng.choice([[0] * len(p["shape"]), [7] * len(p["shape"]),
                                      [1] * (len(p["shape"]) + 1)])
            if p["blocks"] and p["blocks"][0] == 7 and all(n % 7 == 0 for n in p["shape"]):
                p["blocks"] = [0] * len(p["shape"])
            if rng.random() < 0.25:
                del p["shape"]                      # blocks of an unknown shape
        else:
            t["bogus"] = 1
    elif kind == 5:
        t["extra"] = True
    elif kind == 6:
        doc["overrides"] = {"lm_head": {"params": None, "in_src": {}, "in_dst": {}}}
    elif kind == 7:
        doc["templates"] = {"axis": t["axis"], "rules": t["rules"]}
    elif kind == 8:
        t["rules"]["lm_head"] = 3
    else:
        t["prefix"] = None


# ---------------------------------------------------------------------------------------------

def generate_doc(seed, index):
    rng = random.Random(f"shardplan-plan-gen:{seed}:{index}")
    doc = build_model(rng)
    if rng.random() < 0.8:
        # owners as gen_documents.py declares them; those failing the ownership checks are
        # mostly declared again (a quarter are kept: the CLI must then stop before planning)
        for attempt in range(4):
            trial = copy.deepcopy(doc)
            gd.declare_owners(gd.Ctx(rng, trial))
            if attempt == 3 or rng.random() < 0.25 or \
                    ref.run_document(doc_without_planner(trial))["ok"]:
                break
        doc = trial
    if not doc["providers"] and rng.random() < 0.5:
        del doc["providers"]
    r = rng.random()
    if r < 0.05:
        base = doc_without_planner(doc)
        bctx = gd.Ctx(rng, base)
        gd.add_plan(bctx)
        doc["plan"] = base["plan"]
    elif r < 0.10:
        make_invalid(rng, doc)
    else:
        if rng.random() < 0.88:
            add_templates(rng, doc)
        if rng.random() < 0.35:
            add_overrides(rng, doc)
    return doc


def generate_one(seed, index):
    return json.dumps(generate_doc(seed, index), indent=1) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description="Generate shardplan.v1 documents for `plan`.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    labels = collections.Counter()
    codes = collections.Counter()
    for i in range(args.count):
        text = generate_one(args.seed, i)
        res = planner.run_text(text)
        errors = [c for c, s, _ in res["diagnostics"] if s == "error"]
        label = "ok" if res["ok"] else errors[0]
        labels[label] += 1
        for c, s, _ in res["diagnostics"]:
            codes[f"{c} ({s})"] += 1
        with open(os.path.join(args.out, f"{i:05d}-{label}.json"), "w") as f:
            f.write(text)
    print("outcome (first error):")
    for k, v in labels.most_common():
        print(f"  {k:32} {v}")
    print("diagnostics:")
    for k, v in sorted(codes.items()):
        print(f"  {k:40} {v}")
    print(f"total {sum(labels.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""Deterministic random generator of shardplan.v1 documents with a `training` section.

The model, owners, templates, overrides and plans are gen_plan_documents.py's (imported: the same
seed and index give its document), then, from a second random stream of the same seed and index:
  - the mesh sometimes gets one or two more axes (meshes of 1 to 4 axes, at most 64 devices,
    about half with a `dp` axis);
  - about one in eight documents with templates becomes a document with its own final `plan`
    (the plan the planner model makes of it), besides gen_plan_documents.py's own;
  - a `training` section: every zero stage 0-3 (and the default), shard_axes absent (default),
    empty, or one or two mesh axes in any order; every optimizer; optimizer / master / grad
    dtypes (absent, null, every dtype); `frozen` patterns (exact FQNs, `*` segments, the second
    FQN of a tied parameter, patterns matching nothing); `fsdp_units` (per layer, nested units,
    exact paths, patterns matching nothing or only the root); prefetch 0-2; activations with a
    model description (dense, grouped-query, MoE with first_k_dense_replace and shared experts,
    gated or not; recompute none / selective / full / default; tensor_axis default / explicit /
    null; sequence_parallel) at small and at GiB scale; device_memory as an integer and as
    strings of every unit, mostly placed around the worst device's total (to exceed it, come
    near it, or land exactly on the boundaries); headroom;
  - about 5% invalid training sections (one wrong value of each kind).

Usage: python3 gen_training_documents.py --seed N --count K --out DIR
Same seed and count -> byte-identical files, named NNNNN-LABEL.json with the training model's
outcome (`ok`, `near-device-memory` or the first error code). Prints histograms.
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
import gen_plan_documents as gp  # noqa: E402
import planner_reference as planner  # noqa: E402
import training_reference as tref  # noqa: E402

AXES = ["dp", "tp", "ep", "cp"]
DTYPES = list(tref.DTYPE_SIZE)
OPTIMIZERS = ["adamw", "adamw", "adam", "momentum", "sgd", "none"]
UNITS = list(tref.UNITS)
HEADROOMS = [0.5, 0.6, 0.75, 0.8, 0.85, 0.9, 0.95, 1, 0.999]
REAL_MEMORY = ["80GiB", "141GB", "24GiB", "40GB", "16GiB", "192GB", "94GiB", "1TiB", "512MiB",
               "1.5TB", "0.5GiB"]


# ---------------------------------------------------------------------------------------------
# Mesh and plan changes
# ---------------------------------------------------------------------------------------------

def widen_mesh(rng, doc):
    mesh = doc["mesh"]
    missing = [a for a in AXES if a not in mesh]
    if not missing or rng.random() > 0.35:
        return
    n = 1
    for s in mesh.values():
        n *= s
    items = list(mesh.items())
    for axis in rng.sample(missing, min(len(missing), rng.choice([1, 1, 2]))):
        sizes = [s for s in (1, 2, 2, 3, 4) if n * s <= 64]
        size = rng.choice(sizes)
        n *= size
        items.insert(rng.randint(0, len(items)), (axis, size))
    doc["mesh"] = dict(items)


def own_plan(rng, doc):
    """A document with templates -> one with the plan the planner model makes of it."""
    if "templates" not in doc or rng.random() > 0.12:
        return
    res = planner.run_document(copy.deepcopy(doc))
    if not res["complete"] or "plan" not in res:
        return
    doc.pop("templates", None)
    doc.pop("overrides", None)
    doc["plan"] = res["plan"]


# ---------------------------------------------------------------------------------------------
# The training section
# ---------------------------------------------------------------------------------------------

def generalize(rng, path):
    segs = path.split(".")
    out = []
    for s in segs:
        if (s.isdigit() and rng.random() < 0.7) or rng.random() < 0.1:
            out.append("*")
        else:
            out.append(s)
    return ".".join(out)


def frozen_patterns(rng, doc):
    params = gd.named_params(doc, doc["root"])         # FQN -> pid, pre-order
    by_pid = collections.defaultdict(list)
    for fqn, pid in params.items():
        by_pid[pid].append(fqn)
    tied = [fqns for fqns in by_pid.values() if len(fqns) > 1]
    out = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        r = rng.random()
        if r < 0.25 and tied:
            out.append(rng.choice(rng.choice(tied)[1:]))   # a tied parameter's other name
        elif r < 0.5 and params:
            out.append(rng.choice(list(params)))
        elif r < 0.75 and params:
            out.append(generalize(rng, rng.choice(list(params))))
        else:
            out.append(rng.choice(["nope.weight", "layers.*.zz", "layers.*", "*", "",
                                   "model.layers.*.mlp", "*.weight", "embed_tokens.weight",
                                   "lm_head.weight", "model.embed_tokens.weight", "a*.weight"]))
    return out


def fsdp_patterns(rng, doc):
    paths = [f for f, _ in gd.named_modules(doc) if f]
    out = []
    r = rng.random()
    if r < 0.3:
        out = [rng.choice(["layers.*", "model.layers.*"])]
    elif r < 0.5:
        base = rng.choice(["layers.*", "model.layers.*"])
        out = [base, base + rng.choice([".mlp", ".self_attn", ".mlp.experts", ".input_layernorm"])]
        if rng.random() < 0.5:
            out.reverse()
    for _ in range(rng.choice([0, 1, 1, 2])):
        x = rng.random()
        if x < 0.5 and paths:
            out.append(generalize(rng, rng.choice(paths)))
        elif x < 0.6 and paths:
            out.append(rng.choice(paths) + ".weight")       # a parameter path: no module
        else:
            out.append(rng.choice(["nope", "layers.*.mlp.zz", "", "*", "*.*", "lm_head",
                                   "embed_tokens", "model", "layers", "model.norm"]))
    return out


def model_description(rng, large):
    if large:
        h = rng.choice([2048, 4096, 5120, 8192])
        a = rng.choice([16, 32, 40, 64])
        L = rng.choice([16, 24, 32, 48, 80])
        v = rng.choice([32000, 128256, 151936, 50257])
        f = rng.choice([h * 8 // 3, 11008, 14336, 4 * h])
    else:
        h = rng.choice([4, 8, 12, 16, 32, 64])
        a = rng.choice([1, 2, 3, 4, 8])
        L = rng.randint(1, 4)
        v = rng.choice([6, 10, 16, 32, 50])
        f = rng.choice([h, 2 * h, 3 * h, 5])
    m = {"hidden_size": h, "num_attention_heads": a, "intermediate_size": f,
         "num_hidden_layers": L, "vocab_size": v}
    if rng.random() < 0.5:
        m["num_key_value_heads"] = rng.choice([k for k in (1, 2, 4, 8, a) if k <= a])
    if rng.random() < 0.25:
        m["head_dim"] = rng.choice([h // a + 1, 2, 8, 128 if large else 3])
    if rng.random() < 0.3:
        m["gated_mlp"] = rng.random() < 0.5
    if rng.random() < 0.35:
        E = rng.choice([2, 4, 8, 64 if large else 3])
        m["num_experts"] = E
        if rng.random() < 0.8:
            m["num_experts_per_tok"] = rng.randint(1, min(E, 8))
        if rng.random() < 0.6:
            m["moe_intermediate_size"] = rng.choice([f // 2 or 1, f // 4 or 1, 7])
        if rng.random() < 0.5:
            m["num_shared_experts"] = rng.choice([0, 1, 2])
        if rng.random() < 0.6:
            m["first_k_dense_replace"] = rng.randint(0, L)
    elif rng.random() < 0.1:
        m["num_experts"] = 0
    # shuffle the key order now and then (order must not matter)
    if rng.random() < 0.2:
        items = list(m.items())
        rng.shuffle(items)
        m = dict(items)
    return m


def activations(rng, mesh, large):
    a = {"seq_len": rng.choice([1024, 2048, 4096, 8192]) if large
         else rng.choice([1, 2, 3, 8, 16, 64])}
    if rng.random() < 0.5:
        a["micro_batch"] = rng.choice([1, 2, 4]) if large else rng.randint(1, 4)
    if rng.random() < 0.75:
        a["recompute"] = rng.choice(["none", "selective", "full"])
    r = rng.random()
    if r < 0.25:
        a["tensor_axis"] = rng.choice(list(mesh))
    elif r < 0.35:
        a["tensor_axis"] = None
    if rng.random() < 0.4:
        a["sequence_parallel"] = rng.random() < 0.6
    return a


def make_training(rng, doc):
    mesh = doc["mesh"]
    axes = list(mesh)
    t = {}
    if rng.random() < 0.85:
        t["zero"] = rng.randint(0, 3)
    r = rng.random()
    if r < 0.1:
        t["shard_axes"] = []
    elif r < 0.7:
        t["shard_axes"] = rng.sample(axes, min(len(axes), rng.choice([1, 1, 2])))
    if rng.random() < 0.7:
        t["optimizer"] = rng.choice(OPTIMIZERS)
    if rng.random() < 0.4:
        t["optimizer_dtype"] = rng.choice(["float32", "float32", "bfloat16"] + DTYPES)
    for key in ("master_dtype", "grad_dtype"):
        r = rng.random()
        if r < 0.1:
            t[key] = None
        elif r < 0.5:
            t[key] = rng.choice(["float32", "bfloat16", "float16"] + DTYPES)
    if rng.random() < 0.45:
        t["frozen"] = frozen_patterns(rng, doc)
    if rng.random() < 0.55:
        t["fsdp_units"] = fsdp_patterns(rng, doc)
    if rng.random() < 0.5:
        t["prefetch"] = rng.choice([0, 1, 2])
    large = rng.random() < 0.2
    r = rng.random()
    if r < 0.5:
        t["model"] = model_description(rng, large)
        t["activations"] = activations(rng, mesh, large)
    elif r < 0.55:
        t["activations"] = None
    elif r < 0.6:
        t["model"] = model_description(rng, large)
    if rng.random() < 0.4:
        t["headroom"] = rng.choice(HEADROOMS)
    items = list(t.items())
    if rng.random() < 0.3:
        rng.shuffle(items)
    return dict(items)


def memory_text(rng, x):
    """About x bytes, as an integer or as `<number><unit>`."""
    if rng.random() < 0.25:
        return max(1, x)
    unit = rng.choice(UNITS)
    mult = tref.UNITS[unit]
    for _ in range(8):
        decimals = rng.choice([0, 0, 1, 2, 3])
        text = f"{x / mult:.{decimals}f}{unit}"
        try:
            if tref.parse_device_memory(text, "") >= 1:
                return text
        except tref.InvalidDocument:
            pass
        unit = rng.choice(["B", "KB", "KiB"])
        mult = tref.UNITS[unit]
    return f"{max(1, x)}B"


def add_device_memory(rng, doc):
    t = doc["training"]
    if rng.random() < 0.25:
        if rng.random() < 0.3:
            t["device_memory"] = rng.choice(REAL_MEMORY)
        return
    res = tref.run_document(copy.deepcopy(doc))
    if "training" not in res:
        t["device_memory"] = rng.choice(REAL_MEMORY)
        return
    total = res["training"]["max_total_bytes"]
    h = t.get("headroom", 0.8)
    r = rng.random()
    if r < 0.1:
        t["device_memory"] = max(1, total)                  # exactly the total: fits
    elif r < 0.2:
        t["device_memory"] = max(1, total - 1)              # one byte short
    elif r < 0.28:
        # the headroom boundary: total / headroom, and one byte either side
        x = int(total / h) + rng.choice([-1, 0, 1])
        t["device_memory"] = max(1, x)
    else:
        factor = rng.choice([0.3, 0.5, 0.7, 0.9, 0.95, 1.02, 1.1, 1.2, 1.5, 2.0, 4.0])
        t["device_memory"] = memory_text(rng, max(1, int(total * factor)))


INVALID = [
    ("zero", [4, -1, "3", 1.0, True, None]),
    ("shard_axes", ["dp", ["zz"], ["tp", "tp"], [1], None, {"dp": 1}]),
    ("optimizer", ["adafactor", "AdamW", None, 0, ""]),
    ("optimizer_dtype", ["fp32", "float64", None, "Float32", 4]),
    ("master_dtype", ["fp16", "float64", 2]),
    ("grad_dtype", ["half", "float64", True]),
    ("frozen", ["layers.*", [1], None, {"a": 1}, [None]]),
    ("fsdp_units", ["layers.*", [2], None, [["x"]]]),
    ("prefetch", [-1, 65, 1.5, "1", None]),
    ("device_memory", ["80 GiB", "80gib", "80GIB", "0B", "0.4B", "1.GiB", ".5GiB", "80", 0, -1,
                       80.5, None, "9223372036854775808B", "8388608TiB", "1PiB", "1e3B",
                       9223372036854775808, True]),
    ("headroom", [0, 1.5, "0.8", -0.1, None, True, 1.0000001]),
    ("bogus", [1]),
]


def make_invalid(rng, doc):
    t = doc["training"]
    kind = rng.randrange(len(INVALID) + 3)
    if kind < len(INVALID):
        key, values = INVALID[kind]
        v = rng.choice(values)
        if key == "shard_axes" and v == ["tp", "tp"]:
            a = rng.choice(list(doc["mesh"]))
            v = [a, a]
        t[key] = copy.deepcopy(v)
        return
    model = t.get("model") or model_description(rng, False)
    acts = t.get("activations") or {"seq_len": 4}
    if kind == len(INVALID):
        # activations: a bad value, an unknown key, or no model
        x = rng.randrange(9)
        if x == 0:
            t.pop("model", None)
            t["activations"] = acts
            return
        acts = dict(acts)
        if x == 1:
            acts.pop("seq_len")
        elif x == 2:
            acts["seq_len"] = rng.choice([0, -4, "8", 2.5])
        elif x == 3:
            acts["micro_batch"] = rng.choice([0, None, 1.5])
        elif x == 4:
            acts["recompute"] = rng.choice(["partial", "Full", None, True])
        elif x == 5:
            acts["tensor_axis"] = rng.choice(["zz", 1, ""])
        elif x == 6:
            acts["sequence_parallel"] = rng.choice(["yes", 1, None])
        elif x == 7:
            acts["checkpointing"] = True
        else:
            acts = rng.choice([[], "selective", 3])
        t["model"] = model
        t["activations"] = acts
    else:
        # the model description
        m = dict(model)
        x = rng.randrange(9)
        if x == 0:
            m.pop(rng.choice(list(tref.MODEL_REQUIRED)))
        elif x == 1:
            m[rng.choice(list(tref.MODEL_REQUIRED))] = 0
        elif x == 2:
            m[rng.choice(list(tref.MODEL_KEYS[:-1]))] = 1 << 31
        elif x == 3:
            m["num_experts"] = 2
            m["num_experts_per_tok"] = 3
        elif x == 4:
            m["first_k_dense_replace"] = m["num_hidden_layers"] + 1
        elif x == 5:
            m["gated_mlp"] = rng.choice([1, "true", None])
        elif x == 6:
            m["rope_theta"] = 10000.0
        elif x == 7:
            key = rng.choice(["num_experts", "num_shared_experts", "head_dim"])
            m[key] = rng.choice([-1, 2.0, "8"])
        else:
            m = rng.choice([None, [], "llama"])
        t["model"] = m
        if rng.random() < 0.5:
            t["activations"] = acts


# ---------------------------------------------------------------------------------------------

def generate_doc(seed, index):
    doc = gp.generate_doc(seed, index)
    rng = random.Random(f"shardplan-training-gen:{seed}:{index}")
    widen_mesh(rng, doc)
    own_plan(rng, doc)
    doc["training"] = make_training(rng, doc)
    if rng.random() < 0.05:
        make_invalid(rng, doc)
    elif rng.random() < 0.75:
        add_device_memory(rng, doc)
    return doc


def generate_one(seed, index):
    return json.dumps(generate_doc(seed, index), indent=1) + "\n"


def label_of(res):
    errors = [c for c, s, _ in res["diagnostics"] if s == "error"]
    if errors:
        return errors[0]
    codes = [c for c, _, _ in res.get("training_diagnostics", [])]
    for c in ("exceeds-device-memory", "near-device-memory"):
        if c in codes:
            return c
    return "ok"


def main(argv):
    ap = argparse.ArgumentParser(description="Generate shardplan.v1 documents with `training`.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    labels = collections.Counter()
    codes = collections.Counter()
    kinds = collections.Counter()
    for i in range(args.count):
        text = generate_one(args.seed, i)
        obj = json.loads(text)
        res = tref.run_text(text)
        label = label_of(res)
        labels[label] += 1
        for c, s, _ in res.get("training_diagnostics", []):
            codes[f"{c} ({s})"] += 1
        kinds["own plan" if "plan" in obj else "templates/overrides"] += 1
        kinds[f"mesh of {len(obj['mesh'])} axes"] += 1
        t = obj["training"]
        if isinstance(t, dict):
            if "training" in res:
                kinds["with training result"] += 1
            if isinstance(t.get("activations"), dict) and "training" in res:
                kinds["with activations"] += 1
            if "device_memory" in t:
                kinds["with device_memory"] += 1
        with open(os.path.join(args.out, f"{i:05d}-{label}.json"), "w") as f:
            f.write(text)
    print("outcome:")
    for k, v in labels.most_common():
        print(f"  {k:32} {v}")
    print("training diagnostics:")
    for k, v in sorted(codes.items()):
        print(f"  {k:40} {v}")
    print("documents:")
    for k, v in sorted(kinds.items()):
        print(f"  {k:32} {v}")
    print(f"total {sum(labels.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

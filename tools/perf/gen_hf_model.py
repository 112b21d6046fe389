#!/usr/bin/env python3
"""A large shardplan.v1 document shaped like a Hugging Face decoder, for
measurements beside bench/gen_model's: another generator, other bytes per
parameter (long HF module names, module ids that are full paths, pretty
spacing), other owners.

    python3 tools/perf/gen_hf_model.py --params 1000000 --out /tmp/hf.json

The model: model.embed_tokens (Embedding) and lm_head (Linear) tied to one
parameter and owned by two model providers with the same placement (one
alias); model.layers.N (LlamaDecoderLayer) holds self_attn (a family member
with a parallel `tp` spec, whose family layout covers q/k/v/o_proj), mlp
(gate/up/down_proj, owned by a model provider per layer), and two RMSNorms
owned by one native request (`model.layers.*.input_layernorm`,
`model.layers.*.post_attention_layernorm`) with model.norm. Nine parameters
per layer (biases in q/k/v every third layer), so --params sets the number
of layers. Mesh {"dp": 4, "tp": 8}. The document checks OK; with --plan it
also has a final plan repeating every owner's layout. Standard library only;
the same arguments give the same bytes.
"""

import argparse
import json
import sys

HIDDEN, INTER, KV = 4096, 14336, 1024


def dumps(value):
    return json.dumps(value, separators=(", ", ": "))


def layer_params(i):
    """(module local path, parameter name, shape) of layer i's parameters."""
    out = [("self_attn.q_proj", "weight", [HIDDEN, HIDDEN]), ("self_attn.k_proj", "weight", [KV, HIDDEN]),
           ("self_attn.v_proj", "weight", [KV, HIDDEN]), ("self_attn.o_proj", "weight", [HIDDEN, HIDDEN]),
           ("mlp.gate_proj", "weight", [INTER, HIDDEN]), ("mlp.up_proj", "weight", [INTER, HIDDEN]),
           ("mlp.down_proj", "weight", [HIDDEN, INTER]), ("input_layernorm", "weight", [HIDDEN]),
           ("post_attention_layernorm", "weight", [HIDDEN])]
    if i % 3 == 0:
        out += [("self_attn.q_proj", "bias", [HIDDEN]), ("self_attn.k_proj", "bias", [KV]),
                ("self_attn.v_proj", "bias", [KV])]
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--params", type=int, default=1_000_000, help="about this many parameters (default: %(default)s)")
    ap.add_argument("--plan", action="store_true", help="append a final plan repeating every owner's layout")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    layers = max(1, args.params // 10)

    attn_layout = {
        "params": {f"{p}.weight": {"tp": "S(0)" if p != "o_proj" else "S(1)", "dp": "R"}
                   for p in ("q_proj", "k_proj", "v_proj", "o_proj")},
        "in_src": {"hidden_states": {"dp": "S(0)", "tp": "R"}},
        "in_dst": {"hidden_states": {"dp": "S(0)", "tp": "R"}},
        "out_src": {"output": {"dp": "S(0)", "tp": "P"}},
        "out_dst": {"output": {"dp": "S(0)", "tp": "R"}},
    }
    mlp_layout = {
        "params": {"gate_proj.weight": {"tp": "S(0)"}, "up_proj.weight": {"tp": "S(0)"},
                   "down_proj.weight": {"tp": "S(1)"}},
        "in_src": {"x": {"dp": "S(0)"}}, "in_dst": {"x": {"dp": "S(0)"}},
    }
    norm_layout = {"params": {"weight": {"tp": "R", "dp": "R"}}, "in_src": {"hidden_states": {}},
                   "in_dst": {"hidden_states": {}}}
    tied = {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}

    with open(args.out, "w") as f:
        w = f.write
        w('{"schema": "shardplan.v1", "mesh": {"dp": 4, "tp": 8},\n "parameters": {')
        w(f'"model.embed_tokens.weight": {{"shape": [128256, {HIDDEN}], "dtype": "bfloat16"}}')
        w(f',\n  "model.norm.weight": {{"shape": [{HIDDEN}], "dtype": "bfloat16"}}')
        for i in range(layers):
            for local, name, shape in layer_params(i):
                w(f',\n  "model.layers.{i}.{local}.{name}": {{"shape": {dumps(shape)}, "dtype": "bfloat16"}}')
        w('},\n "root": "",\n "modules": {\n')
        w('  "": {"type": "LlamaForCausalLM", "forward": ["input_ids"], '
          '"children": {"model": "model", "lm_head": "lm_head"}},\n')
        w('  "lm_head": {"type": "Linear", "forward": ["input"], "params": {"weight": "model.embed_tokens.weight"}},\n')
        w('  "model": {"type": "LlamaModel", "forward": ["input_ids"], '
          '"children": {"embed_tokens": "model.embed_tokens", "layers": "model.layers", "norm": "model.norm"}},\n')
        w('  "model.embed_tokens": {"type": "Embedding", "forward": ["input"], '
          '"params": {"weight": "model.embed_tokens.weight"}},\n')
        w('  "model.norm": {"type": "LlamaRMSNorm", "forward": ["hidden_states"], '
          '"params": {"weight": "model.norm.weight"}},\n')
        children = ", ".join(f'"{i}": "model.layers.{i}"' for i in range(layers))
        w(f'  "model.layers": {{"type": "ModuleList", "children": {{{children}}}}}')
        for i in range(layers):
            p = f"model.layers.{i}"
            byparent = {}
            for local, name, _ in layer_params(i):
                byparent.setdefault(local, []).append(name)
            w(f',\n  "{p}": {{"type": "LlamaDecoderLayer", "forward": ["hidden_states", "**kwargs"], "children": '
              f'{{"self_attn": "{p}.self_attn", "mlp": "{p}.mlp", "input_layernorm": "{p}.input_layernorm", '
              f'"post_attention_layernorm": "{p}.post_attention_layernorm"}}}}')
            w(f',\n  "{p}.self_attn": {{"type": "LlamaAttention", "forward": ["hidden_states", "**kwargs"], '
              f'"children": {{"q_proj": "{p}.self_attn.q_proj", "k_proj": "{p}.self_attn.k_proj", '
              f'"v_proj": "{p}.self_attn.v_proj", "o_proj": "{p}.self_attn.o_proj"}}, '
              f'"parallel": {{"binding_kind": "tp", "axes": ["tp"]}}, '
              f'"family": {{"parallel": true, "sharding": {dumps(attn_layout_for(attn_layout, i))}}}}}')
            w(f',\n  "{p}.mlp": {{"type": "LlamaMLP", "forward": ["x"], "children": {{"gate_proj": "{p}.mlp.gate_proj", '
              f'"up_proj": "{p}.mlp.up_proj", "down_proj": "{p}.mlp.down_proj"}}}}')
            for local, names in byparent.items():
                module_type = "LlamaRMSNorm" if "norm" in local else "Linear"
                forward = '["hidden_states"]' if "norm" in local else '["input"]'
                params = ", ".join(f'"{n}": "{p}.{local}.{n}"' for n in names)
                w(f',\n  "{p}.{local}": {{"type": "{module_type}", "forward": {forward}, "params": {{{params}}}}}')
        w('},\n "providers": {\n  "sharding": {')
        w(f'"model.embed_tokens": {dumps(tied)},\n   "lm_head": {dumps(tied)}')
        for i in range(layers):
            w(f',\n   "model.layers.{i}.mlp": {dumps(mlp_layout)}')
        w('},\n  "native": [{"match": ["model.layers.*.input_layernorm", "model.layers.*.post_attention_layernorm", '
          f'"model.norm"], "sharding": {dumps(norm_layout)}, "parallel": null}}]}}')
        if args.plan:
            w(',\n "plan": {"modules": {')
            w(f'"model.embed_tokens": {dumps(tied)},\n   "lm_head": {{"params": {{}}, "in_src": {{}}, "in_dst": {{}}}}')
            for i in range(layers):
                p = f"model.layers.{i}"
                w(f',\n   "{p}.mlp": {dumps(mlp_layout)}')
                w(f',\n   "{p}.self_attn": {dumps(attn_layout_for(attn_layout, i))}')
                w(f',\n   "{p}.input_layernorm": {dumps(norm_layout)}')
                w(f',\n   "{p}.post_attention_layernorm": {dumps(norm_layout)}')
            w(f',\n   "model.norm": {dumps(norm_layout)}}}}}')
        w("}\n")
    return 0


def attn_layout_for(layout, i):
    """The attention family's layout of layer i: its biases too where it has them."""
    if i % 3 != 0:
        return layout
    out = dict(layout)
    out["params"] = dict(layout["params"])
    for p in ("q_proj", "k_proj", "v_proj"):
        out["params"][f"{p}.bias"] = {"tp": "S(0)", "dp": "R"}
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Shared pieces of the model zoo (examples/zoo/*.py).

Each zoo script builds one published model's module STRUCTURE with torch.nn on
the meta device (no weights, no memory), declares who owns which layout, and
hands the model to ``shardplan.torch.export``. This module holds what the
scripts have in common:

- ``layout`` / ``attention_family`` / ``gqa_attention_class``: the module-owned
  layouts (docs/format.md), and the attention class that declares one;
- ``vocab_parallel_providers``: the model adapter's providers for the
  embedding and the output head;
- ``published_plan``: a plan as a transformers release publishes it (the
  verbatim texts in hf_plans/);
- ``hf_template`` / ``hf_pipeline``: a Hugging Face ``base_model_tp_plan`` /
  ``base_model_ep_plan`` as a planner template, a ``base_model_pp_plan`` as the
  document's pipeline plan (docs/planning.md), keys and styles unchanged;
- ``head_blocks``: the head-sized ``blocks`` every attention module declares;
- ``main``: the command line every script shares (writes out/<name>.json,
  out/<name>-broken.json and the script's training setups,
  out/<name>-<setup>.json, one line per document with its size and the time).

Nothing here imports shardplan until a document is exported, so the scripts'
model building can be tried on its own.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Sequence, Tuple

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "out")

META = torch.device("meta")


# ---------------------------------------------------------------------------
# Building on the meta device


def linear(in_features: int, out_features: int, bias: bool, dtype: torch.dtype) -> nn.Linear:
    """An ``nn.Linear`` on the meta device, built without running its
    initializer (``reset_parameters`` is a no-op on meta tensors anyway, but
    it is still a few Python calls per module; this keeps the class and the
    parameters exactly as ``nn.Linear(..., device="meta")`` makes them)."""
    module = nn.Linear.__new__(nn.Linear)
    nn.Module.__init__(module)
    module.in_features = in_features
    module.out_features = out_features
    module.weight = nn.Parameter(torch.empty((out_features, in_features), device=META, dtype=dtype))
    module.register_parameter(
        "bias", nn.Parameter(torch.empty(out_features, device=META, dtype=dtype)) if bias else None
    )
    return module


def embedding(num_embeddings: int, embedding_dim: int, dtype: torch.dtype, padding_idx=None) -> nn.Embedding:
    return nn.Embedding(num_embeddings, embedding_dim, padding_idx=padding_idx, device=META, dtype=dtype)


def meta_parameter(*shape: int, dtype: torch.dtype) -> nn.Parameter:
    return nn.Parameter(torch.empty(shape, device=META, dtype=dtype))


def _named(cls: type, name: str, module: str) -> type:
    """``cls`` under transformers' class name (the exporter records it as the module's type)."""
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = module
    return cls


def rms_norm_class(prefix: str, module: str) -> type:
    """``<prefix>RMSNorm``: one weight of the hidden size."""

    class RMSNorm(nn.Module):
        def __init__(self, hidden_size, eps=1e-6, *, dtype):
            super().__init__()
            self.weight = meta_parameter(hidden_size, dtype=dtype)
            self.variance_epsilon = eps

        def forward(self, hidden_states):
            raise NotImplementedError("structure only: built on the meta device")

    return _named(RMSNorm, prefix + "RMSNorm", module)


def rotary_embedding_class(prefix: str, module: str, rope_dim: str = "head_dim") -> type:
    """``<prefix>RotaryEmbedding``: no parameters, only a non-persistent
    ``inv_freq`` buffer of ``config.<rope_dim> // 2`` (buffers are not
    exported); kept for the structure."""

    class RotaryEmbedding(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.register_buffer("inv_freq", torch.empty(getattr(config, rope_dim) // 2, device=META),
                                 persistent=False)

        def forward(self, x, position_ids):
            raise NotImplementedError("structure only: built on the meta device")

    return _named(RotaryEmbedding, prefix + "RotaryEmbedding", module)


def causal_lm_classes(prefix: str, module: str, decoder_layer: type, rms_norm: type, rotary_embedding: type):
    """``<prefix>Model`` and ``<prefix>ForCausalLM``, the same in every decoder-only model of
    transformers: embedding, decoder layers, final norm and rotary embedding, then the LM head
    (tied to the embedding when the config says so)."""

    class Model(nn.Module):
        def __init__(self, config, *, dtype):
            super().__init__()
            self.embed_tokens = embedding(config.vocab_size, config.hidden_size, dtype)
            self.layers = nn.ModuleList([decoder_layer(config, i, dtype=dtype) for i in range(config.num_hidden_layers)])
            self.norm = rms_norm(config.hidden_size, config.rms_norm_eps, dtype=dtype)
            self.rotary_emb = rotary_embedding(config)

        def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                    inputs_embeds=None, use_cache=None, cache_position=None, **kwargs):
            raise NotImplementedError("structure only: built on the meta device")

    class ForCausalLM(nn.Module):
        def __init__(self, config, *, dtype=torch.bfloat16):
            super().__init__()
            # As transformers keeps it: shardplan.torch describes the model for the
            # activations from it (shardplan.torch.model_description).
            self.config = config
            self.model = Model(config, dtype=dtype)
            self.lm_head = linear(config.hidden_size, config.vocab_size, False, dtype)
            if config.tie_word_embeddings:
                self.lm_head.weight = self.model.embed_tokens.weight

        def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                    inputs_embeds=None, labels=None, use_cache=None, cache_position=None, logits_to_keep=0,
                    **kwargs):
            raise NotImplementedError("structure only: built on the meta device")

    return _named(Model, prefix + "Model", module), _named(ForCausalLM, prefix + "ForCausalLM", module)


def parameter_count(model: nn.Module) -> int:
    """Distinct parameter tensors' elements (tied weights once)."""
    return sum(p.numel() for p in model.parameters())  # parameters() yields each tensor once


# ---------------------------------------------------------------------------
# Layouts (docs/format.md, "Layouts")


def layout(
    params: Mapping[str, Mapping[str, str]],
    inputs: Mapping[str, Tuple[Mapping[str, str], Mapping[str, str]]] = (),
    outputs: Mapping[str, Tuple[Mapping[str, str], Mapping[str, str]]] = (),
) -> Dict[str, Any]:
    """A module sharding spec: ``params`` {local name: placements}, ``inputs`` and
    ``outputs`` {name: (source placements, destination placements)}."""
    out: Dict[str, Any] = {
        "params": {k: dict(v) for k, v in params.items()},
        "in_src": {k: dict(v[0]) for k, v in dict(inputs).items()},
        "in_dst": {k: dict(v[1]) for k, v in dict(inputs).items()},
    }
    outputs = dict(outputs)
    if outputs:
        out["out_src"] = {k: dict(v[0]) for k, v in outputs.items()}
        out["out_dst"] = {k: dict(v[1]) for k, v in outputs.items()}
    return out


def attention_family(
    axis: str,
    column: Sequence[str],
    row: Sequence[str],
    replicated: Sequence[str] = (),
) -> Dict[str, Any]:
    """``parallel_module_spec()`` of a tensor-parallel attention block that owns
    its layout (as fused attention kernels do: Megatron's ``SelfAttention``,
    vLLM's ``QKVParallelLinear`` + ``RowParallelLinear``): ``column`` projections
    split by output rows (heads) ``S(0)``, ``row`` projections by input columns
    ``S(1)``, ``replicated`` parameters whole on every device. The input arrives
    replicated; the output leaves as a partial sum and is all-reduced."""
    params: Dict[str, Dict[str, str]] = {}
    for name in column:
        params[f"{name}.weight"] = {axis: "S(0)"}
    for name in row:
        params[f"{name}.weight"] = {axis: "S(1)"}
    for name in replicated:
        params[name] = {axis: "R"}
    sharding = layout(
        params,
        inputs={"hidden_states": ({axis: "R"}, {axis: "R"})},
        outputs={"attn_output": ({axis: "P"}, {axis: "R"})},
    )
    return {
        "parallel": {"binding_kind": "tp", "axes": [axis]},
        "family": {"parallel": True, "cached": None, "sharding": sharding},
    }


def gqa_attention_class(name: str, module: str, head_norm: Any = None) -> type:
    """``name``: grouped-query attention (``q_proj``, ``k_proj``, ``v_proj``,
    ``o_proj``; with ``head_norm``, an RMSNorm class, Qwen3's ``q_norm`` and
    ``k_norm`` over head_dim after them) that owns its tensor-parallel layout
    as fused attention implementations do (``attention_family``): q/k/v split
    by heads, o_proj by input columns, the head norms replicated; with its
    projections' head-sized ``blocks``."""

    class Attention(nn.Module):
        def __init__(self, config, layer_idx, *, dtype, tp_axis="tp"):
            super().__init__()
            self.layer_idx = layer_idx
            self.head_dim = config.head_dim
            self.tp_axis = tp_axis
            h, d, bias = config.hidden_size, config.head_dim, getattr(config, "attention_bias", False)
            self.q_proj = linear(h, config.num_attention_heads * d, bias, dtype)
            self.k_proj = linear(h, config.num_key_value_heads * d, bias, dtype)
            self.v_proj = linear(h, config.num_key_value_heads * d, bias, dtype)
            self.o_proj = linear(config.num_attention_heads * d, h, bias, dtype)
            if head_norm is not None:
                self.q_norm = head_norm(d, config.rms_norm_eps, dtype=dtype)
                self.k_norm = head_norm(d, config.rms_norm_eps, dtype=dtype)

        def forward(self, hidden_states, position_embeddings, attention_mask, past_key_values=None,
                    cache_position=None, **kwargs):
            raise NotImplementedError("structure only: built on the meta device")

        def parallel_module_spec(self):
            replicated = ("q_norm.weight", "k_norm.weight") if head_norm is not None else ()
            return attention_family(self.tp_axis, column=("q_proj", "k_proj", "v_proj"), row=("o_proj",),
                                    replicated=replicated)

        def head_blocks(self):
            # q/k/v rows come in heads of head_dim; o_proj's input columns likewise.
            d = self.head_dim
            return {"q_proj.weight": [d, 1], "k_proj.weight": [d, 1], "v_proj.weight": [d, 1],
                    "o_proj.weight": [1, d]}

    return _named(Attention, name, module)


def vocab_parallel_providers(
    axis: str,
    embed_fqn: str = "model.embed_tokens",
    head_fqn: str = "lm_head",
    head_weight: str = "S(0)",
) -> Dict[str, Any]:
    """The model adapter's providers for the embedding and the output head.

    embed_tokens is vocab-parallel (transformers' ``embedding_rowwise``: rows of
    the ``[vocab, hidden]`` table split, output a partial sum that is reduced);
    lm_head is ``colwise_gather_output`` (transformers' ``_tp_plan`` for every
    *ForCausalLM: vocab rows split, logits gathered). ``head_weight`` other than
    ``S(0)`` is how the broken variants misplace a tied head."""
    embed = layout(
        {"weight": {axis: "S(0)"}},
        inputs={"input": ({axis: "R"}, {axis: "R"})},
        outputs={"output": ({axis: "P"}, {axis: "R"})},
    )
    if head_weight == "S(0)":
        head = layout(
            {"weight": {axis: "S(0)"}},
            inputs={"input": ({axis: "R"}, {axis: "R"})},
            outputs={"output": ({axis: "S(-1)"}, {axis: "R"})},
        )
    else:  # row-parallel (transformers' "rowwise" on a Linear): hidden columns split
        head = layout(
            {"weight": {axis: head_weight}},
            inputs={"input": ({axis: "S(-1)"}, {axis: "S(-1)"})},
            outputs={"output": ({axis: "P"}, {axis: "R"})},
        )
    return {"sharding": {embed_fqn: embed, head_fqn: head}}


# ---------------------------------------------------------------------------
# Hugging Face plans as planner templates (docs/planning.md)

#: The transformers releases whose published plans hf_plans/ holds verbatim.
TRANSFORMERS_4 = "4.57.6"
TRANSFORMERS_5 = "5.15.0"


def published_plan(release: str, model: str, attribute: str) -> Dict[str, Any]:
    """A plan as transformers ``release`` publishes it: ``attribute``
    (``base_model_tp_plan``, ``base_model_ep_plan``, ``base_model_pp_plan``,
    ``_tp_plan``, ``_pp_plan``) of ``model`` (``llama``, ``qwen3_moe``,
    ``mixtral``, ``deepseek_v3``, ``llama4``), read from the verbatim text in
    hf_plans/ (README.md there names each file's source)."""
    path = os.path.join(HERE, "hf_plans", f"transformers-{release}", f"{model}.{attribute}.txt")
    with open(path, encoding="utf-8") as f:
        return ast.literal_eval(f.read())


def hf_template(
    axis: str,
    plan: Mapping[str, str],
    prefix: str = "model",
    drop: Iterable[str] = (),
) -> Dict[str, Any]:
    """A template from a transformers plan (pattern -> style), keys and styles
    unchanged: the engine knows every style name of transformers 4.x and 5.x.

    ``prefix`` is where the base model sits (``model`` in every *ForCausalLM);
    ``drop`` lists key prefixes left out because a module owns that layout
    (templates never override owned layouts: pasted unchanged they would only
    produce one ``template-skipped-owned`` warning per layer)."""
    drop = tuple(drop)
    out: Dict[str, Any] = {"axis": axis}
    if prefix:
        out["prefix"] = prefix
    out["rules"] = {key: style for key, style in plan.items() if not (drop and key.startswith(drop))}
    return out


def hf_pipeline(plan: Mapping[str, Any], prefix: str = "model") -> Dict[str, Any]:
    """The document's ``pipeline`` from a transformers ``base_model_pp_plan``
    (module -> (inputs, outputs), tuples as lists), under ``prefix``."""
    return {"prefix": prefix, "modules": {m: [list(ins), list(outs)] for m, (ins, outs) in plan.items()}}


def head_blocks(model: nn.Module) -> Dict[str, List[int]]:
    """``blocks`` for the document: every module with a ``head_blocks()`` method
    (the attention blocks) names its parameters' head-sized units."""
    blocks: Dict[str, List[int]] = {}
    for path, module in model.named_modules():
        method = getattr(type(module), "head_blocks", None)
        if method is None:
            continue
        for local, units in module.head_blocks().items():
            blocks[f"{path}.{local}" if path else local] = list(units)
    return blocks


# ---------------------------------------------------------------------------
# The command line every zoo script shares


def _import_exporter():
    try:
        import shardplan.torch as exporter  # noqa: F401
    except ImportError as first:
        sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
        try:
            import shardplan.torch as exporter  # noqa: F811
        except ImportError:
            raise first from None
    return exporter


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def main(
    name: str,
    build: Callable[..., Tuple[nn.Module, Dict[str, Any]]],
    argv=None,
    training: Mapping[str, Callable[[], Tuple[nn.Module, Dict[str, Any]]]] = (),
) -> int:
    """Builds ``name``'s good and broken documents into examples/zoo/out/, and
    its training setups: ``training`` {setup: factory} -> out/<name>-<setup>.json.

    Prints one line per document: path, size, modules, parameters, total
    parameter count, and the time to build the model and to export it.
    ``--plan`` also plans each document with the library and prints the
    summary (``shardplan.torch.report``, the diagnostics folded; with a
    training section, the worst device's training memory)."""
    training = dict(training)
    parser = argparse.ArgumentParser(
        description=f"Writes out/{name}.json, out/{name}-broken.json"
        + "".join(f", out/{name}-{setup}.json" for setup in training) + "."
    )
    parser.add_argument("--out-dir", default=OUT, help="where to write (default: examples/zoo/out)")
    parser.add_argument("--only", choices=("good", "broken", "training"),
                        help="write just the good document, the broken one, or the training setups")
    parser.add_argument("--plan", action="store_true", help="also plan each document and print a summary")
    args = parser.parse_args(argv)
    exporter = _import_exporter()
    os.makedirs(args.out_dir, exist_ok=True)
    status = 0
    documents = [("good", "", lambda: build(broken=False), False),
                 ("broken", "-broken", lambda: build(broken=True), True)]
    # A training setup's verdict is what it shows (test_zoo.py checks each): only the good
    # document must plan without errors.
    documents += [("training", f"-{setup}", factory, True) for setup, factory in training.items()]
    for kind, suffix, factory, broken in documents:
        if args.only and args.only != kind:
            continue
        path = os.path.join(args.out_dir, f"{name}{suffix}.json")
        t0 = time.perf_counter()
        model, extras = factory()
        t1 = time.perf_counter()
        extras = dict(extras)
        mesh = extras.pop("mesh")
        doc = exporter.export(model, mesh, **extras)
        text = exporter.dumps(doc)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        t2 = time.perf_counter()
        rel = os.path.relpath(path, os.getcwd())
        rel = path if rel.startswith("..") else rel
        mesh_text = ",".join(f"{k}={v}" for k, v in doc["mesh"].items())
        print(
            f"{rel}: {_mib(len(text.encode()))}, {len(doc['modules'])} modules, "
            f"{len(doc['parameters'])} parameters ({parameter_count(model) / 1e9:.2f}B), mesh {mesh_text}; "
            f"built in {t1 - t0:.2f} s, exported in {t2 - t1:.2f} s",
            flush=True,
        )
        if args.plan:
            import shardplan

            with shardplan.plan(text) as result:
                codes: Dict[str, int] = {}
                for d in result.diagnostics:
                    key = f"{d.severity}[{d.code}]"
                    codes[key] = codes.get(key, 0) + 1
                m = result.memory
                trained = ((result.to_dict().get("memory") or {}).get("training") or {}).get("worst")
                print(
                    f"  plan: {'ok' if result.ok else 'errors'}; "
                    + (", ".join(f"{k} x{v}" for k, v in codes.items()) or "no diagnostics")
                    + (f"; max {m.max_bytes / 2**30:.2f} GiB per device of {m.devices}" if m else "")
                    + (f"; training {trained['total'] / 2**30:.2f} GiB on device {trained['device']}"
                       if trained else "")
                )
                status = max(status, 0 if result.ok or broken else 1)
    return status


#: The zoo's scripts, in the order build_all.sh runs them: (script module, document name).
MODELS = (
    ("llama3_8b", "llama3-8b"),
    ("qwen3_30b_a3b", "qwen3-30b-a3b"),
    ("mixtral_8x7b", "mixtral-8x7b"),
    ("deepseek_v3", "deepseek-v3"),
    ("llama4_scout", "llama4-scout"),
)


def build_all(argv=None) -> int:
    """Every script's ``main`` in one process (torch is imported once)."""
    import importlib

    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    status = 0
    for module_name, name in MODELS:
        module = importlib.import_module(module_name)
        status = max(status, main(name, module.build, argv, getattr(module, "TRAINING", ())))
    return status

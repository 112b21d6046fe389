"""Export a PyTorch model as a shardplan.v1 document, and check or plan it.

    >>> import torch, shardplan.torch
    >>> with torch.device("meta"):             # torch 2.x; on 1.13 pass device="meta"
    ...     model = MyModel(config)
    >>> doc = shardplan.torch.export(model, "dp=8,tp=4", templates=[...])
    >>> result = shardplan.torch.plan(model, "dp=8,tp=4", templates=[...])

or from the command line (see ``python -m shardplan.torch --help``):

    python -m shardplan.torch my_models:build --mesh dp=8,tp=4 --out doc.json --plan

The document is read from the module and tensor objects themselves, so it
matches what torch reports:

- **Module ids.** One module object is one module id, however many paths
  reach it. The root's id is ``"<root>"``; every other module's id is its
  first path in ``named_modules()`` order (``"layers.0.attn"``). Should that
  string be taken already (a child literally named ``"<root>"``), ``"#2"``,
  ``"#3"``, ... is appended until it is unique.
- **Parameter ids.** One tensor object is one parameter id: its first full
  name in ``named_parameters()`` order (``"embed_tokens.weight"``; a tied
  ``lm_head.weight`` names the same id). ``shape`` is ``list(p.shape)``
  (omitted for a lazy module's uninitialized parameter), ``dtype`` its name.
- **Modules.** ``type`` is the class name; ``forward`` the parameter names of
  ``inspect.signature(module.forward)`` in order (``*args`` and ``**kwargs``
  spelled so; omitted if there is no signature); ``children`` and ``params``
  follow ``module._modules`` / ``module._parameters`` in registration order,
  ``None`` entries skipped (omitted when empty). Buffers are not exported.
- **Declarations.** A module with a method ``parallel_module_spec()``
  returning a dict with the optional keys ``"parallel"`` (a parallel spec or
  None) and ``"family"`` (a family object, docs/format.md) gets them copied
  into its module entry.
- **Training.** ``training={...}`` becomes the document's ``training``
  section (docs/format.md, "Training"): ZeRO stage, optimizer, dtypes, FSDP
  units, activations, ``device_memory``. When it has ``activations`` but no
  ``model``, the model description is read from the model's Hugging Face
  config (``model.config``) by ``model_description``.

Importing ``shardplan`` does not import this module or torch; importing this
module imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

try:
    import torch as _torch  # absolute: the real torch, never this module
except ImportError as error:  # pragma: no cover - torch is installed where this is tested
    raise ImportError(
        "shardplan.torch needs PyTorch (import torch failed: "
        f"{error}); the rest of shardplan works without it"
    ) from error

import shardplan as _shardplan
from shardplan import _cli

__all__ = [
    "ROOT_ID", "DTYPES", "UNGATED_MODEL_TYPES", "export", "check", "plan", "dumps", "report", "model_description",
    "main",
]

#: The module id of the root module.
ROOT_ID = "<root>"

#: The dtypes a shardplan.v1 document knows (torch.<name>).
DTYPES = (
    "float32",
    "float16",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "int8",
    "int32",
    "int64",
    "bool",
)

MeshLike = Union[str, Mapping[str, int], Sequence[Tuple[str, int]]]
_DTYPE_TYPE = type(_torch.float32)


# ---------------------------------------------------------------------------
# Arguments


def _mesh(mesh: MeshLike) -> Dict[str, int]:
    """``{"dp": 8, "tp": 4}``, ``"dp=8,tp=4"`` or ``[("dp", 8), ...]`` -> ordered dict."""
    if isinstance(mesh, str):
        pairs = []
        for item in mesh.split(","):
            name, sep, size = item.partition("=")
            name, size = name.strip(), size.strip()
            if not sep or not name:
                raise ValueError(f"mesh {mesh!r}: expected NAME=SIZE[,NAME=SIZE...], got {item!r}")
            try:
                value = int(size)
            except ValueError:
                raise ValueError(f"mesh {mesh!r}: size of {name!r} is not an integer: {size!r}") from None
            pairs.append((name, value))
    elif isinstance(mesh, Mapping):
        pairs = list(mesh.items())
    elif isinstance(mesh, (list, tuple)):
        pairs = [tuple(p) for p in mesh]
    else:
        raise TypeError(f"mesh must be a dict or a string such as 'dp=8,tp=4', not {type(mesh).__name__}")
    out: Dict[str, int] = {}
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"mesh entry {pair!r} is not a (name, size) pair")
        name, size = pair
        if not isinstance(name, str) or not name:
            raise ValueError(f"mesh axis names must be non-empty strings, not {name!r}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"mesh axis {name!r} must have an integer size >= 1, not {size!r}")
        if name in out:
            raise ValueError(f"mesh axis {name!r} appears twice")
        out[name] = size
    if not out:
        raise ValueError("the mesh has no axis")
    return out


def _json_copy(value: Any, what: str) -> Any:
    """A deep copy of a JSON-able value (dicts keep their order)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise TypeError(f"{what} must be JSON data (dicts, lists, strings, numbers): {error}") from None


def _dtype_name(dtype: Any, what: str) -> str:
    if isinstance(dtype, _DTYPE_TYPE):
        name = str(dtype)
        name = name[len("torch."):] if name.startswith("torch.") else name
    elif isinstance(dtype, str):
        name = dtype[len("torch."):] if dtype.startswith("torch.") else dtype
    else:
        raise TypeError(f"{what}: expected a torch.dtype or its name, not {type(dtype).__name__}")
    if name not in DTYPES:
        raise ValueError(
            f"{what}: dtype {name} cannot be written in a shardplan.v1 document "
            f"(known: {', '.join(DTYPES)}); pass export(..., dtype=...) to export "
            "floating-point parameters as another dtype"
        )
    return name


def _forward(module, cache: Dict[Any, Optional[List[str]]]) -> Optional[List[str]]:
    """The names of ``inspect.signature(module.forward)``; cached per function
    for the usual bound method (a model repeats a few classes many times)."""
    forward = module.forward
    function = getattr(forward, "__func__", None) if getattr(forward, "__self__", None) is module else None
    if function is not None and function in cache:
        return cache[function]
    names = _signature_names(forward)
    if function is not None:
        cache[function] = names
    return names


def _signature_names(forward) -> Optional[List[str]]:
    try:
        signature = inspect.signature(forward)
    except (TypeError, ValueError):  # a builtin or C function without a signature
        return None
    names = []
    for p in signature.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            names.append("*" + p.name)
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            names.append("**" + p.name)
        else:
            names.append(p.name)
    return names


def _declaration(module, path: str) -> Dict[str, Any]:
    """The module's own ``parallel_module_spec()``: {"parallel"?, "family"?}."""
    method = getattr(type(module), "parallel_module_spec", None)
    if method is None or not callable(method):
        return {}
    spec = module.parallel_module_spec()
    where = f"parallel_module_spec() of the module at {path or '(root)'!r} ({type(module).__name__})"
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise TypeError(f"{where} must return a dict, not {type(spec).__name__}")
    unknown = [k for k in spec if k not in ("parallel", "family")]
    if unknown:
        raise ValueError(f"{where} returned unknown keys {unknown} (known: 'parallel', 'family')")
    out = {}
    for key in ("parallel", "family"):
        if key in spec:
            out[key] = _json_copy(spec[key], f"{where}[{key!r}]")
    if out.get("family", 0) is None:  # "family": None means not a family member
        del out["family"]
    return out


# ---------------------------------------------------------------------------
# Export


def _walk(model) -> List[Tuple[str, Any]]:
    """(first path, module) of every module, in named_modules() order.

    Iterative, over ``_modules`` as named_modules() walks it: each module once,
    at its first path (a shared module's later paths repeat a subtree already
    listed).
    """
    seen = set()
    out = []
    stack = [("", model)]
    while stack:
        path, module = stack.pop()
        if id(module) in seen:
            continue
        seen.add(id(module))
        out.append((path, module))
        children = [(n, m) for n, m in module._modules.items() if m is not None]
        for name, child in reversed(children):
            if id(child) not in seen:
                stack.append((f"{path}.{name}" if path else name, child))
    return out


def _resolve(model, name: str, param_ids) -> str:
    """The parameter id of the full name ``name`` (any path), or ValueError."""
    *parts, local = name.split(".")
    module = model
    for i, part in enumerate(parts):
        child = module._modules.get(part)
        if child is None:
            raise ValueError(f"blocks: {name!r} names no parameter: no submodule {'.'.join(parts[: i + 1])!r}")
        module = child
    tensor = module._parameters.get(local)
    if tensor is None:
        raise ValueError(f"blocks: {name!r} names no parameter of {type(module).__name__}")
    return param_ids[id(tensor)]


def export(
    model,
    mesh: MeshLike,
    providers: Optional[Mapping[str, Any]] = None,
    templates: Union[None, str, Sequence[Mapping[str, Any]]] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    blocks: Optional[Mapping[str, Sequence[int]]] = None,
    dtype: Any = None,
    pipeline: Union[None, str, Mapping[str, Any]] = None,
    training: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """The shardplan.v1 document (a dict) of ``model`` on ``mesh``.

    model: an ``nn.Module``, typically built on the meta device.
    mesh: ``{"dp": 8, "tp": 4}`` or ``"dp=8,tp=4"`` (axis order kept).
    providers: ``{"sharding": {FQN: layout}, "native": [request, ...]}``.
    templates: a list of templates (docs/planning.md), or ``"auto"``: the
    model's own Hugging Face plans (``config.base_model_tp_plan`` under the
    base model and the class's ``_tp_plan`` on axis ``tp``,
    ``config.base_model_ep_plan`` on axis ``ep``, each where the mesh has the
    axis), as the installed transformers spells them.
    overrides: ``{FQN: layout}``.
    blocks: ``{parameter full name (any of its paths): [b0, b1, ...]}``.
    dtype: None (each parameter's own dtype), or a torch.dtype or name that
    every floating-point parameter is exported as (as ``model.to(dtype)``
    would cast it).
    pipeline: a pipeline plan ``{"prefix": FQN, "modules": {NAME: [inputs,
    outputs]}}`` (docs/planning.md), or ``"auto"``: the model's own
    (``config.base_model_pp_plan`` under the base model, then the class's
    ``_pp_plan``).
    training: the document's ``training`` section (docs/format.md,
    "Training"), e.g. ``{"zero": 3, "fsdp_units": ["model.layers.*"],
    "master_dtype": "float32", "activations": {"seq_len": 8192},
    "device_memory": "80GiB"}``. With ``activations`` and no ``model``, the
    model description is ``model_description(model.config)`` (ValueError when
    the model has no Hugging Face config: pass ``training["model"]``).
    """
    if not isinstance(model, _torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, not {type(model).__name__}")
    doc: Dict[str, Any] = {"schema": "shardplan.v1", "mesh": _mesh(mesh)}
    cast = None if dtype is None else _dtype_name(dtype, "dtype")
    if cast is not None and not (cast.startswith("float") or cast == "bfloat16"):
        raise ValueError(f"dtype {cast}: only floating-point dtypes can be cast to")

    walk = _walk(model)
    module_ids: Dict[int, str] = {}
    used = set()
    for path, module in walk:
        mid = path if path else ROOT_ID
        if mid in used:
            n = 2
            while f"{mid}#{n}" in used:
                n += 1
            mid = f"{mid}#{n}"
        used.add(mid)
        module_ids[id(module)] = mid

    parameters: Dict[str, Any] = {}
    param_ids: Dict[int, str] = {}
    modules: Dict[str, Any] = {}
    signatures: Dict[Any, Optional[List[str]]] = {}
    uninitialized = getattr(_torch.nn.parameter, "UninitializedParameter", ())
    for path, module in walk:
        entry: Dict[str, Any] = {"type": type(module).__name__}
        forward = _forward(module, signatures)
        if forward is not None:
            entry["forward"] = list(forward)
        children = {n: module_ids[id(m)] for n, m in module._modules.items() if m is not None}
        if children:
            entry["children"] = children
        params = {}
        for local, tensor in module._parameters.items():
            if tensor is None:
                continue
            pid = param_ids.get(id(tensor))
            if pid is None:
                pid = f"{path}.{local}" if path else local
                param_ids[id(tensor)] = pid
                info: Dict[str, Any] = {}
                if not (uninitialized and isinstance(tensor, uninitialized)):
                    info["shape"] = [int(d) for d in tensor.shape]
                if cast is not None and tensor.is_floating_point():
                    info["dtype"] = cast
                else:
                    info["dtype"] = _dtype_name(tensor.dtype, f"parameter {pid!r}")
                parameters[pid] = info
            params[local] = pid
        if params:
            entry["params"] = params
        entry.update(_declaration(module, path))
        modules[module_ids[id(module)]] = entry

    if blocks:
        if not isinstance(blocks, Mapping):
            raise TypeError(f"blocks must be a dict, not {type(blocks).__name__}")
        given: Dict[str, Tuple[str, List[int]]] = {}
        for name, value in blocks.items():
            pid = _resolve(model, name, param_ids)
            units = _json_copy(value, f"blocks[{name!r}]")
            if not isinstance(units, list) or not all(
                isinstance(b, int) and not isinstance(b, bool) for b in units
            ):
                raise TypeError(f"blocks[{name!r}] must be a list of integers, not {value!r}")
            if pid in given and given[pid][1] != units:
                raise ValueError(
                    f"blocks: {name!r} and {given[pid][0]!r} are one parameter with different blocks"
                )
            given[pid] = (name, units)
            parameters[pid]["blocks"] = units

    doc["parameters"] = parameters
    doc["root"] = module_ids[id(model)]
    doc["modules"] = modules
    if providers is not None:
        providers = _json_copy(providers, "providers")
        if not isinstance(providers, dict):
            raise TypeError("providers must be a dict {'sharding': {...}, 'native': [...]}")
        unknown = [k for k in providers if k not in ("sharding", "native")]
        if unknown:
            raise ValueError(f"providers has unknown keys {unknown} (known: 'sharding', 'native')")
        doc["providers"] = providers
    if isinstance(templates, str):
        if templates != "auto":
            raise ValueError(f"templates must be a list of templates or 'auto', not {templates!r}")
        templates = _auto_templates(model, doc["mesh"])
    if templates is not None:
        templates = _json_copy(list(templates), "templates")
        doc["templates"] = templates
    if overrides is not None:
        doc["overrides"] = _json_copy(overrides, "overrides")
    if isinstance(pipeline, str):
        if pipeline != "auto":
            raise ValueError(f"pipeline must be a pipeline plan or 'auto', not {pipeline!r}")
        pipeline = _auto_pipeline(model)
    if pipeline is not None:
        doc["pipeline"] = _json_copy(pipeline, "pipeline")
    if training is not None:
        doc["training"] = _training_section(model, training)
    return doc


def _base_prefix(model) -> str:
    """Where the base model sits: the model's ``base_model_prefix``
    (transformers: ``"model"``) when it has that child, else the root."""
    prefix = getattr(model, "base_model_prefix", "")
    if isinstance(prefix, str) and prefix and isinstance(model._modules.get(prefix), _torch.nn.Module):
        return prefix
    return ""


def _own_plans(model, base_attribute: str, class_attribute: str) -> List[Tuple[str, Mapping[str, Any]]]:
    """The model's plans of one kind, as (prefix, plan): its config's
    ``base_model_*_plan`` under the base model, then the class's own
    (``_tp_plan``, ``_pp_plan``: FQNs from the root). A model whose
    instance holds the merged plan instead (no config plan) gives that."""
    plans = []
    base = getattr(getattr(model, "config", None), base_attribute, None)
    if base:
        plans.append((_base_prefix(model), base))
        own = getattr(type(model), class_attribute, None)
    else:
        own = getattr(model, class_attribute, None)
    if own:
        plans.append(("", own))
    return plans


def _auto_templates(model, mesh: Mapping[str, int]) -> List[Dict[str, Any]]:
    templates = []
    for axis, base_attribute, class_attribute in (("tp", "base_model_tp_plan", "_tp_plan"),
                                                  ("ep", "base_model_ep_plan", "_ep_plan")):
        if axis not in mesh:
            continue
        for prefix, plan in _own_plans(model, base_attribute, class_attribute):
            template: Dict[str, Any] = {"axis": axis}
            if prefix:
                template["prefix"] = prefix
            template["rules"] = dict(plan)
            templates.append(template)
    if not templates:
        raise ValueError(
            "templates='auto': the model has no Hugging Face plan for the mesh's axes "
            f"({', '.join(mesh)}): no config.base_model_tp_plan / _tp_plan for 'tp', "
            "no config.base_model_ep_plan for 'ep'"
        )
    return templates


def _auto_pipeline(model) -> Dict[str, Any]:
    modules: Dict[str, Any] = {}
    for prefix, plan in _own_plans(model, "base_model_pp_plan", "_pp_plan"):
        for name, (inputs, outputs) in plan.items():
            modules[f"{prefix}.{name}" if prefix else name] = [list(inputs), list(outputs)]
    if not modules:
        raise ValueError("pipeline='auto': the model has no config.base_model_pp_plan or _pp_plan")
    return {"modules": modules}


# ---------------------------------------------------------------------------
# Training: the document's training section and the model description

#: Hugging Face ``model_type`` values whose MLP has no gate (an up projection,
#: the activation, a down projection): ``gated_mlp`` is false for them and
#: true for every other config (the SwiGLU / GeGLU MLPs of Llama, Mistral,
#: Mixtral, Qwen, DeepSeek, Gemma, Phi-3, ...; a config without
#: ``model_type`` counts as gated).
UNGATED_MODEL_TYPES = frozenset({
    "bert", "bloom", "falcon", "gpt2", "gpt_bigcode", "gpt_neo", "gpt_neox", "gptj", "mpt", "opt",
    "phi", "roberta", "starcoder2",
})


def _config_value(config, name: str) -> Any:
    if isinstance(config, Mapping):
        return config.get(name)
    return getattr(config, name, None)


def _config_int(config, name: str, required: bool = False) -> Optional[int]:
    value = _config_value(config, name)
    if value is None:
        if required:
            raise ValueError(f"the config has no {name!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"the config's {name!r} is not an integer: {value!r}")
    return value


def _config_ints(config, name: str) -> List[int]:
    value = _config_value(config, name)
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise ValueError(f"the config's {name!r} is not a list of layer numbers: {value!r}")
    return list(value)


def model_description(config) -> Dict[str, Any]:
    """The ``training.model`` description (docs/planning.md, "Activations")
    of a Hugging Face config: a ``transformers`` config object, any object
    with the same attributes, or the dict of a ``config.json``.

    Read as transformers builds the model:

    - ``hidden_size``, ``num_attention_heads``, ``num_hidden_layers``,
      ``vocab_size``, ``intermediate_size`` (the dense MLP's size) as the
      config names them; ``num_key_value_heads`` (default: the attention
      heads) and ``head_dim`` (default: ``hidden_size // num_attention_heads``,
      transformers' own) always written out.
    - Multi-head latent attention (DeepSeek-V2/V3: ``qk_nope_head_dim``,
      ``qk_rope_head_dim``, ``v_head_dim``): the description has one head size
      for Q, K, V and the output projection's input, so ``head_dim`` is their
      mean, ``(qk_nope + qk_rope + v) / 2`` rounded up (DeepSeek-V3: (128 + 64 +
      128) / 2 = 160), which keeps the same bytes (Q and K of 192 per head, V
      and the output of 128), with as many key/value heads as query heads;
      ``config.head_dim`` (transformers sets it to the rotary part) is not
      used. The low-rank latents (``q_lora_rank``, ``kv_lora_rank``) and
      their norms are not in the description.
    - ``gated_mlp``: false for the model types of ``UNGATED_MODEL_TYPES``,
      true otherwise.
    - Mixture of experts, when the config has experts: ``num_experts`` from
      ``num_local_experts`` (Mixtral, Llama 4), ``num_experts`` (Qwen2/3-MoE,
      OLMoE) or ``n_routed_experts`` (DeepSeek); ``num_experts_per_tok``
      (required with experts);
      ``moe_intermediate_size`` (Mixtral has none: its experts are
      ``intermediate_size`` wide; Llama 4's are ``intermediate_size``, its
      dense layers ``intermediate_size_mlp``); ``num_shared_experts`` from
      ``n_shared_experts`` (DeepSeek), 1 for Llama 4's shared expert, and
      Qwen2-MoE's ``shared_expert_intermediate_size`` as a number of experts
      of ``moe_intermediate_size`` (ValueError when it is not a multiple);
      ``first_k_dense_replace``, the number of dense layers, from the
      config's layer pattern: DeepSeek's ``first_k_dense_replace`` and
      ``moe_layer_freq``, Qwen's ``decoder_sparse_step`` and
      ``mlp_only_layers``, Llama 4's ``moe_layers`` /
      ``interleave_moe_layer_step``. The description counts the dense layers
      as the first ones; where the config puts them elsewhere (Qwen's
      ``decoder_sparse_step`` 2: every other layer) only their number is
      kept, which is all the activations depend on (every device holds every
      layer: pipeline parallelism is not modelled).
    - A config with a ``text_config`` and no ``hidden_size`` of its own (Llama
      4, Gemma 3, the vision-language models) is described by its
      ``text_config``.

    Raises ValueError naming the missing or unusable value; then write the
    description yourself (``training={"model": {...}}``).
    """
    if _config_value(config, "hidden_size") is None and _config_value(config, "text_config") is not None:
        config = _config_value(config, "text_config")
    required = ("hidden_size", "num_attention_heads", "num_hidden_layers", "vocab_size", "intermediate_size")
    missing = [name for name in required if _config_value(config, name) is None]
    if missing:
        raise ValueError(f"the config has no {', '.join(repr(name) for name in missing)}")
    h = _config_int(config, "hidden_size", required=True)
    a = _config_int(config, "num_attention_heads", required=True)
    layers = _config_int(config, "num_hidden_layers", required=True)
    vocab = _config_int(config, "vocab_size", required=True)
    kv = _config_int(config, "num_key_value_heads")
    kv = a if kv is None else kv
    mla = [_config_int(config, k) for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")]
    if all(v is not None for v in mla):
        nope, rope, v = mla
        head_dim = -(-(nope + rope + v) // 2)
        kv = a  # kv_b_proj gives every query head its own key and value
    else:
        head_dim = _config_int(config, "head_dim")
        if head_dim is None:
            if a == 0:
                raise ValueError("the config has num_attention_heads 0")
            head_dim = h // a
    intermediate = _config_int(config, "intermediate_size", required=True)
    dense_mlp = _config_int(config, "intermediate_size_mlp")  # Llama 4: the dense layers' MLP
    out: Dict[str, Any] = {
        "hidden_size": h,
        "num_attention_heads": a,
        "num_key_value_heads": kv,
        "head_dim": head_dim,
        "intermediate_size": intermediate if dense_mlp is None else dense_mlp,
        "gated_mlp": _config_value(config, "model_type") not in UNGATED_MODEL_TYPES,
        "num_hidden_layers": layers,
        "vocab_size": vocab,
    }

    experts = None
    for name in ("num_local_experts", "num_experts", "n_routed_experts"):
        experts = _config_int(config, name)
        if experts is not None:
            break
    if not experts:
        return out
    moe = _config_int(config, "moe_intermediate_size")
    if moe is None:  # Mixtral, Llama 4: intermediate_size is the experts'
        moe = intermediate
    shared = _config_int(config, "n_shared_experts")
    if shared is None:
        shared = _config_int(config, "num_shared_experts")
    if shared is None:
        shared_size = _config_int(config, "shared_expert_intermediate_size")  # Qwen2-MoE
        if shared_size:
            if shared_size % moe:
                raise ValueError(
                    f"the config's shared_expert_intermediate_size {shared_size} is not a multiple of "
                    f"moe_intermediate_size {moe}: the description counts shared experts of that size"
                )
            shared = shared_size // moe
        elif dense_mlp is not None:
            shared = 1  # Llama 4: one shared expert of intermediate_size in every MoE layer
        else:
            shared = 0

    # Which layers are mixtures of experts, as transformers builds them.
    if _config_value(config, "n_routed_experts") is not None:  # DeepSeek-V2/V3, GLM-4-MoE
        first = _config_int(config, "first_k_dense_replace") or 0
        freq = _config_int(config, "moe_layer_freq") or 1
        sparse = [i >= first and i % freq == 0 for i in range(layers)]
    elif dense_mlp is not None:  # Llama 4
        if _config_value(config, "moe_layers") is None:
            step = _config_int(config, "interleave_moe_layer_step") or 1
            listed = set(range(step - 1, layers, step))
        else:
            listed = set(_config_ints(config, "moe_layers"))
        sparse = [i in listed for i in range(layers)]
    else:  # Qwen2/3-MoE (decoder_sparse_step, mlp_only_layers), Mixtral (every layer)
        step = _config_int(config, "decoder_sparse_step") or 1
        only = set(_config_ints(config, "mlp_only_layers"))
        first = _config_int(config, "first_k_dense_replace")
        sparse = [i not in only and (i + 1) % step == 0 and (first is None or i >= first) for i in range(layers)]

    top_k = _config_int(config, "num_experts_per_tok")
    if top_k is None:
        raise ValueError(f"the config has {experts} experts but no 'num_experts_per_tok'")
    out["num_experts"] = experts
    out["num_experts_per_tok"] = top_k
    out["moe_intermediate_size"] = moe
    out["num_shared_experts"] = shared
    out["first_k_dense_replace"] = sparse.count(False)
    return out


def _training_section(model, training: Mapping[str, Any]) -> Dict[str, Any]:
    """The document's ``training`` section: ``training`` copied, with ``model``
    described from ``model.config`` when activations need it."""
    if not isinstance(training, Mapping):
        raise TypeError(
            f"training must be a dict (the document's training section), not {type(training).__name__}"
        )
    section = _json_copy(training, "training")
    if section.get("activations") is None or "model" in section:
        return section
    config = getattr(model, "config", None)
    if config is None:
        raise ValueError(
            "training has 'activations' but no 'model', and the model has no Hugging Face config "
            "(model.config) to describe it: pass training['model'] = {'hidden_size': ..., "
            "'num_attention_heads': ..., 'intermediate_size': ..., 'num_hidden_layers': ..., "
            "'vocab_size': ...} (docs/format.md, \"Training\"), or "
            "shardplan.torch.model_description(config) of the model's config"
        )
    try:
        description = model_description(config)
    except ValueError as error:
        raise ValueError(
            f"training has 'activations' but no 'model', and model.config cannot describe the model: "
            f"{error}; pass training['model'] (docs/format.md, \"Training\")"
        ) from None
    out: Dict[str, Any] = {}
    for key, value in section.items():  # the description right after the activations
        out[key] = value
        if key == "activations":
            out["model"] = description
    return out


def dumps(doc: Mapping[str, Any]) -> str:
    """The document as JSON text: one line per parameter and per module."""
    lines = []
    keys = list(doc)
    for i, key in enumerate(keys):
        value = doc[key]
        comma = "," if i + 1 < len(keys) else ""
        if key in ("parameters", "modules") and isinstance(value, Mapping) and value:
            lines.append(f"  {json.dumps(key)}: {{")
            items = list(value.items())
            for j, (k, v) in enumerate(items):
                sep = "," if j + 1 < len(items) else ""
                lines.append(f"    {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}{sep}")
            lines.append("  }" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    return "{\n" + "\n".join(lines) + "\n}\n"


def check(
    model,
    mesh: MeshLike,
    providers: Optional[Mapping[str, Any]] = None,
    templates: Union[None, str, Sequence[Mapping[str, Any]]] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    blocks: Optional[Mapping[str, Sequence[int]]] = None,
    dtype: Any = None,
    threads: int = 0,
    pipeline: Union[None, str, Mapping[str, Any]] = None,
    training: Optional[Mapping[str, Any]] = None,
) -> "_shardplan.Result":
    """``shardplan.check`` of ``export(model, mesh, ...)``: the module-owned
    layouts (and a document's shapes) checked, and with ``training`` and the
    document's own plan, its training memory; a ``shardplan.Result``."""
    doc = export(model, mesh, providers, templates, overrides, blocks, dtype, pipeline, training)
    return _shardplan.check(json.dumps(doc, ensure_ascii=False), threads=threads)


def plan(
    model,
    mesh: MeshLike,
    providers: Optional[Mapping[str, Any]] = None,
    templates: Union[None, str, Sequence[Mapping[str, Any]]] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    blocks: Optional[Mapping[str, Sequence[int]]] = None,
    dtype: Any = None,
    threads: int = 0,
    pipeline: Union[None, str, Mapping[str, Any]] = None,
    training: Optional[Mapping[str, Any]] = None,
) -> "_shardplan.Result":
    """``shardplan.plan`` of ``export(model, mesh, ...)``: the final plan from
    the owners, templates and overrides, checked, with memory per device and
    communication (and with ``training``, the training memory per device and
    its verdict against ``device_memory``); a ``shardplan.Result``."""
    doc = export(model, mesh, providers, templates, overrides, blocks, dtype, pipeline, training)
    return _shardplan.plan(json.dumps(doc, ensure_ascii=False), threads=threads)


# ---------------------------------------------------------------------------
# Command line

_USAGE_EPILOG = """\
FACTORY() returns the model (build it on the meta device) or a pair
(model, extras), extras a dict with any of the keys mesh, providers,
templates, overrides, blocks, dtype, pipeline, training: the export arguments.
A command-line option replaces the extra of the same name. MODULE is a module name
importable from the current directory, or a path to a .py file.

Exit status: 0 written (and no errors), 1 the check or plan found errors,
2 usage error, unreadable input or a failing export."""


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def report(result, path: str = "model", device_memory: Union[None, int, str] = None) -> str:
    """The text ``shardplan check``/``shardplan plan`` print for a result:
    the diagnostics, a summary line and, for a planned result, memory per
    device, the training memory (with a ``training`` section), collectives and
    the plan table (as ``python -m shardplan`` prints them). ``device_memory``:
    the training section's (bytes or a string such as ``"80GiB"``), for the
    worst device's bar and share, which the result itself does not hold."""
    out = []
    data = result.to_dict()
    errors = warnings = 0
    for d in result.diagnostics:
        severity = str(d.severity)
        errors += severity == "error"
        warnings += severity == "warning"
        out.append(f"{severity}[{d.code}]: {d.message}")
        out.append(f"  --> {path}" + (f":{d.pointer}" if d.pointer else ""))
    if result.ok:
        owned = data.get("owned") or {}
        summary = (
            f"ok: {_plural(len(owned.get('specs', {})), 'owner', 'owners')}, "
            f"{_plural(len(owned.get('owned_names', [])), 'owned parameter name', 'owned parameter names')}, "
            f"{_plural(len(owned.get('aliases', [])), 'alias', 'aliases')}"
        )
    else:
        summary = _plural(errors, "error", "errors")
    if warnings:
        summary += ", " + _plural(warnings, "warning", "warnings")
    out.append(f"{path}: {summary}")
    out.extend(_cli.memory_lines(result, _cli.byte_size(device_memory)))
    return "\n".join(out) + "\n"


def _load_factory(spec: str):
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected MODULE:FACTORY, got {spec!r}")
    if module_name.endswith(".py") or os.sep in module_name:
        name = os.path.splitext(os.path.basename(module_name))[0]
        folder = os.path.dirname(os.path.abspath(module_name))
        if folder not in sys.path:  # as for a script: its neighbours import
            sys.path.insert(0, folder)
        loader_spec = importlib.util.spec_from_file_location(name, module_name)
        if loader_spec is None or loader_spec.loader is None:
            raise ValueError(f"cannot load {module_name!r}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules.setdefault(name, module)
        loader_spec.loader.exec_module(module)
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    factory = module
    for part in attr.split("."):
        factory = getattr(factory, part)
    if not callable(factory):
        raise TypeError(f"{spec} is not callable")
    return factory


def _read_json(path: str) -> Any:
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


_EXTRAS = ("mesh", "providers", "templates", "overrides", "blocks", "dtype", "pipeline", "training")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m shardplan.torch``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m shardplan.torch",
        description="Exports a PyTorch model as a shardplan.v1 document, and checks or plans it.",
        epilog=_USAGE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("factory", metavar="MODULE:FACTORY", help="the function that builds the model")
    parser.add_argument("--mesh", help="the device mesh, e.g. dp=8,tp=4 (axis order kept)")
    parser.add_argument("--providers", metavar="FILE", help="JSON: {'sharding': {FQN: layout}, 'native': [...]}")
    parser.add_argument("--templates", metavar="FILE", help="JSON: a list of templates; 'auto': the model's own Hugging Face plans")
    parser.add_argument("--overrides", metavar="FILE", help="JSON: {FQN: layout}")
    parser.add_argument("--blocks", metavar="FILE", help="JSON: {parameter full name: [b0, b1, ...]}")
    parser.add_argument("--pipeline", metavar="FILE", help="JSON: a pipeline plan; 'auto': the model's own base_model_pp_plan")
    parser.add_argument("--training", metavar="FILE_OR_JSON",
                        help="the document's training section: a JSON file, or the JSON itself "
                             "(e.g. '{\"zero\": 3, \"device_memory\": \"80GiB\"}'); with activations and no "
                             "model, the model is described from model.config")
    parser.add_argument("--dtype", help="export every floating-point parameter as this dtype (e.g. bfloat16)")
    parser.add_argument("--out", metavar="DOC.json", required=True, help="where to write the document ('-': standard output)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="also check the document and print the result")
    group.add_argument("--plan", action="store_true", help="also plan the document and print the result")
    parser.add_argument("--threads", type=int, default=0, help="worker threads for --check/--plan (0: all cores)")
    args = parser.parse_args(argv)

    def fail(message: str) -> int:
        print(f"shardplan.torch: {message}", file=sys.stderr)
        return 2

    try:
        factory = _load_factory(args.factory)
    except Exception as error:  # an import error of the user's module, with its message
        return fail(f"cannot load {args.factory}: {type(error).__name__}: {error}")
    built = factory()
    extras: Dict[str, Any] = {}
    if isinstance(built, tuple):
        if len(built) != 2 or not isinstance(built[1], Mapping):
            return fail(f"{args.factory}() must return a model or a (model, extras dict) pair")
        built, extras = built[0], dict(built[1])
        unknown = [k for k in extras if k not in _EXTRAS]
        if unknown:
            return fail(f"{args.factory}() returned unknown extras {unknown} (known: {', '.join(_EXTRAS)})")
    options = dict(extras)
    try:
        for key in ("providers", "templates", "overrides", "blocks", "pipeline"):
            path = getattr(args, key)
            if path == "auto" and key in ("templates", "pipeline"):
                options[key] = "auto"
            elif path is not None:
                options[key] = _read_json(path)
        if args.training is not None:
            text = args.training.strip()
            options["training"] = json.loads(text) if text.startswith("{") else _read_json(args.training)
    except (OSError, ValueError) as error:
        return fail(f"cannot read {error}")
    if args.mesh is not None:
        options["mesh"] = args.mesh
    if args.dtype is not None:
        options["dtype"] = args.dtype
    if "mesh" not in options:
        return fail("no mesh: pass --mesh (or return one in the factory's extras)")
    mesh = options.pop("mesh")
    try:
        doc = export(built, mesh, **options)
    except (TypeError, ValueError) as error:
        return fail(f"cannot export: {error}")
    text = dumps(doc)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    if not (args.check or args.plan):
        if args.out != "-":
            print(
                f"{args.out}: {_plural(len(doc['modules']), 'module', 'modules')}, "
                f"{_plural(len(doc['parameters']), 'parameter', 'parameters')}"
            )
        return 0
    run = _shardplan.plan if args.plan else _shardplan.check
    with run(text, threads=args.threads) as result:
        device_memory = (doc.get("training") or {}).get("device_memory")
        sys.stdout.write(report(result, args.out, device_memory))
        return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())

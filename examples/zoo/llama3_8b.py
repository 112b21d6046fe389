"""Meta-Llama-3-8B: the module structure, its sharding plan, a broken variant, and
training setups (FSDP on one node of 8 x 80 GiB, as torchtitan trains it).

    /usr/bin/python3 examples/zoo/llama3_8b.py          # writes out/llama3-8b.json, out/llama3-8b-broken.json,
                                                        # out/llama3-8b-fsdp*.json
    python3 -m shardplan.torch examples/zoo/llama3_8b.py:build --out /tmp/llama.json --plan
    python3 -m shardplan.torch examples/zoo/llama3_8b.py:build_fsdp --out /tmp/llama-fsdp.json --plan

The model is built with torch.nn on the meta device (shapes and dtypes, no
memory), with the module and parameter names of transformers'
``LlamaForCausalLM`` (src/transformers/models/llama/modeling_llama.py), so the
published tensor-parallel plan applies unchanged.

Configuration: https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as zoo  # noqa: E402

NAME = "llama3-8b"

# meta-llama/Meta-Llama-3-8B config.json (the values that shape parameters).
CONFIG = SimpleNamespace(
    architectures=["LlamaForCausalLM"],
    model_type="llama",
    hidden_act="silu",
    hidden_size=4096,
    intermediate_size=14336,
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,          # grouped-query attention: 4 query heads per KV head
    head_dim=4096 // 32,            # not in config.json: hidden_size / num_attention_heads = 128
    vocab_size=128256,
    tie_word_embeddings=False,
    attention_bias=False,           # transformers' default; config.json: "attention_bias": false
    mlp_bias=False,
    rms_norm_eps=1e-05,
    rope_theta=500000.0,
    max_position_embeddings=8192,
    torch_dtype="bfloat16",
)

# LlamaConfig.base_model_tp_plan as transformers 5 publishes it (hf_plans/, verbatim).
HF_BASE_MODEL_TP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "llama", "base_model_tp_plan")
# LlamaForCausalLM._tp_plan = {"lm_head": "colwise_gather_output"} ("colwise_rep" before
# transformers 5): here the model adapter provides lm_head's layout itself (below).

# The mesh: 4 nodes of 8 GPUs, tensor parallel inside a node.
MESH = {"dp": 4, "tp": 8}
# The broken variant's mesh: tensor parallel over 16 devices, more than the 8 KV heads.
BROKEN_MESH = {"dp": 2, "tp": 16}


LlamaRMSNorm = zoo.rms_norm_class("Llama", __name__)

LlamaRotaryEmbedding = zoo.rotary_embedding_class("Llama", __name__)


LlamaAttention = zoo.gqa_attention_class("LlamaAttention", __name__)


class LlamaMLP(nn.Module):
    def __init__(self, config, *, dtype):
        super().__init__()
        h, i, bias = config.hidden_size, config.intermediate_size, config.mlp_bias
        self.gate_proj = zoo.linear(h, i, bias, dtype)
        self.up_proj = zoo.linear(h, i, bias, dtype)
        self.down_proj = zoo.linear(i, h, bias, dtype)

    def forward(self, x):
        raise NotImplementedError("structure only: built on the meta device")


class LlamaDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx, *, dtype):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.self_attn = LlamaAttention(config, layer_idx, dtype=dtype)
        self.mlp = LlamaMLP(config, dtype=dtype)
        self.input_layernorm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)
        self.post_attention_layernorm = LlamaRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)

    def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                use_cache=False, cache_position=None, position_embeddings=None, **kwargs):
        raise NotImplementedError("structure only: built on the meta device")


LlamaModel, LlamaForCausalLM = zoo.causal_lm_classes(
    "Llama", __name__, LlamaDecoderLayer, LlamaRMSNorm, LlamaRotaryEmbedding
)


def build(broken: bool = False):
    """(model, export arguments). ``broken``: the mistake below."""
    model = LlamaForCausalLM(CONFIG, dtype=getattr(torch, CONFIG.torch_dtype))
    extras = {
        "mesh": BROKEN_MESH if broken else MESH,
        # The embedding and the head: the model adapter's providers (vocab-parallel).
        "providers": zoo.vocab_parallel_providers("tp"),
        # The published plan; its self_attn rules are left out because every
        # LlamaAttention owns that layout itself (templates never override it).
        "templates": [zoo.hf_template("tp", HF_BASE_MODEL_TP_PLAN, drop=("layers.*.self_attn.",))],
        "pipeline": zoo.hf_pipeline(zoo.published_plan(zoo.TRANSFORMERS_5, "llama", "base_model_pp_plan")),
        "blocks": zoo.head_blocks(model),
    }
    # Broken: tensor parallel 16 > 8 KV heads. k_proj and v_proj are [1024, 4096] =
    # 8 heads of 128 rows; over tp=16 half the devices get no KV head: empty-shard,
    # reported per parameter because of the head-sized blocks (without blocks,
    # 1024 rows over 16 devices would look fine: 64 rows each, half a head).
    return model, extras


def build_broken():
    return build(broken=True)


# ---------------------------------------------------------------------------
# Training (README.md, "Training setups")

# One node of 8 GPUs of 80 GiB, every GPU a data-parallel rank: torchtitan's Llama 3 8B
# (torchtitan/models/llama3/train_configs/llama3_8b.toml: data_parallel_shard_degree -1,
# tensor_parallel_degree 1, local_batch_size 1, seq_len 8192). tp=1 keeps the published
# tensor-parallel plan in the document, splitting nothing.
FSDP_MESH = {"dp": 8, "tp": 1}

# FSDP2 (fully_shard) as torchtitan applies it: every decoder layer its own unit, the
# rest (embedding, final norm, head) the root unit; parameters, gradients and optimizer
# states sharded over dp (zero 3); AdamW with fp32 states and an fp32 master copy of the
# bf16 parameters; gradients reduced in fp32 (MixedPrecisionPolicy(param_dtype=bfloat16,
# reduce_dtype=float32)); one unit prefetched. Activations of one sequence of 8192 tokens,
# every layer recomputed in the backward pass (activation_checkpoint.mode "full");
# the model description comes from CONFIG (shardplan.torch.model_description).
FSDP_TRAINING = {
    "zero": 3,
    "shard_axes": ["dp"],
    "optimizer": "adamw",
    "optimizer_dtype": "float32",
    "master_dtype": "float32",
    "grad_dtype": "float32",
    "fsdp_units": ["model.embed_tokens", "model.layers.*", "lm_head"],
    "prefetch": 1,
    "activations": {"micro_batch": 1, "seq_len": 8192, "recompute": "full"},
    "device_memory": "80GiB",
}

#: The training setups: out/llama3-8b-<setup>.json.
#: fsdp: fits. fsdp-selective: torchtitan's default selective recompute, near the memory.
#: fsdp-broken: "zero" left out (0: plain data parallel, everything replicated): exceeds.
TRAINING_SETUPS = ("fsdp", "fsdp-selective", "fsdp-broken")


def build_training(setup: str = "fsdp"):
    """(model, export arguments) of one training setup (``TRAINING_SETUPS``)."""
    if setup not in TRAINING_SETUPS:
        raise ValueError(f"unknown setup {setup!r} (known: {', '.join(TRAINING_SETUPS)})")
    model, extras = build()
    training = dict(FSDP_TRAINING)
    if setup == "fsdp-selective":
        # Only the attention scores recomputed (torchtitan's default, activation_checkpoint.mode
        # "selective"): the MLP's gate, up and product tensors of all 32 layers stay.
        training["activations"] = dict(training["activations"], recompute="selective")
    if setup == "fsdp-broken":
        # The mistake: the FSDP settings without "zero": 3. Zero 0 is plain data
        # parallelism (DDP): every GPU holds all 8B parameters, their gradients, the
        # master copy and both AdamW states, 18 bytes a parameter.
        del training["zero"]
    extras.update(mesh=FSDP_MESH, training=training)
    return model, extras


def build_fsdp():
    return build_training("fsdp")


def build_fsdp_selective():
    return build_training("fsdp-selective")


def build_fsdp_broken():
    return build_training("fsdp-broken")


TRAINING = {"fsdp": build_fsdp, "fsdp-selective": build_fsdp_selective, "fsdp-broken": build_fsdp_broken}


if __name__ == "__main__":
    sys.exit(zoo.main(NAME, build, training=TRAINING))

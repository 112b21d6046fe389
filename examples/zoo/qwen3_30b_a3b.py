"""Qwen3-30B-A3B (mixture of experts): the module structure, its plan, and a broken variant.

    /usr/bin/python3 examples/zoo/qwen3_30b_a3b.py      # writes out/qwen3-30b-a3b.json and out/qwen3-30b-a3b-broken.json
    python3 -m shardplan.torch examples/zoo/qwen3_30b_a3b.py:build --out /tmp/qwen3.json --plan

Built with torch.nn on the meta device with the module and parameter names of
transformers 5's ``Qwen3MoeForCausalLM`` (src/transformers/models/qwen3_moe/
modeling_qwen3_moe.py): every layer's ``mlp`` is a ``Qwen3MoeSparseMoeBlock``
holding a router (``gate``) and the 128 experts stored as two stacked tensors
(``experts.gate_up_proj`` [128, 2 x 768, 2048], ``experts.down_proj``
[128, 2048, 768]), which is what the published tensor- and expert-parallel
plans below name.

Configuration: https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as zoo  # noqa: E402

NAME = "qwen3-30b-a3b"

# Qwen/Qwen3-30B-A3B config.json (the values that shape parameters).
CONFIG = SimpleNamespace(
    architectures=["Qwen3MoeForCausalLM"],
    model_type="qwen3_moe",
    hidden_act="silu",
    hidden_size=2048,
    intermediate_size=6144,          # dense MLP size: unused, every layer is sparse (below)
    moe_intermediate_size=768,
    num_hidden_layers=48,
    num_attention_heads=32,
    num_key_value_heads=4,           # only 4 KV heads: tensor parallel beyond 4 splits a head
    head_dim=128,                    # explicit in config.json (32 x 128 = 4096 != hidden_size)
    num_experts=128,
    num_experts_per_tok=8,
    decoder_sparse_step=1,           # with mlp_only_layers = [], every layer is a MoE layer
    mlp_only_layers=[],
    norm_topk_prob=True,
    vocab_size=151936,
    tie_word_embeddings=False,
    attention_bias=False,
    rms_norm_eps=1e-06,
    rope_theta=1000000.0,
    max_position_embeddings=40960,
    torch_dtype="bfloat16",
)

# Qwen3MoeConfig.base_model_tp_plan as transformers 5 publishes it (hf_plans/, verbatim).
HF_BASE_MODEL_TP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "qwen3_moe", "base_model_tp_plan")
# ... and its base_model_ep_plan ("Expert-only EP plan: only shards MoE experts,
# not attention. [...] This allows EP to scale beyond num_kv_heads (not constrained by 4
# for Qwen3-30B)").
HF_BASE_MODEL_EP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "qwen3_moe", "base_model_ep_plan")
# Qwen3MoeForCausalLM._tp_plan = {"lm_head": "colwise_gather_output"}: provided by the
# model adapter here (zoo.vocab_parallel_providers).

# Rules of the published tp plan that name the dense MLP (Qwen3MoeMLP) of layers listed in
# mlp_only_layers. This checkpoint has none, so they match nothing in this model.
DENSE_MLP_RULES = ("layers.*.mlp.gate_proj", "layers.*.mlp.up_proj", "layers.*.mlp.down_proj")

# 4 nodes of 8 GPUs: tensor parallel 4 (= the KV heads), expert parallel 4 (32 experts
# per group), data parallel 2.
MESH = {"dp": 2, "ep": 4, "tp": 4}
# The broken variant: tensor parallel over a whole node, 8 > 4 KV heads.
BROKEN_MESH = {"dp": 2, "ep": 2, "tp": 8}


Qwen3MoeRMSNorm = zoo.rms_norm_class("Qwen3Moe", __name__)

Qwen3MoeRotaryEmbedding = zoo.rotary_embedding_class("Qwen3Moe", __name__)


# Grouped-query attention with per-head RMSNorm of q and k (q_norm, k_norm over head_dim),
# replicated (transformers: replicated_with_grad_allreduce).
Qwen3MoeAttention = zoo.gqa_attention_class("Qwen3MoeAttention", __name__, head_norm=Qwen3MoeRMSNorm)


class Qwen3MoeTopKRouter(nn.Module):
    def __init__(self, config, *, dtype):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.num_experts = config.num_experts
        self.weight = zoo.meta_parameter(config.num_experts, config.hidden_size, dtype=dtype)

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class Qwen3MoeExperts(nn.Module):
    """The experts as stacked tensors: [experts, 2 x moe_intermediate, hidden] (gate and
    up fused) and [experts, hidden, moe_intermediate]."""

    def __init__(self, config, *, dtype):
        super().__init__()
        e, h, i = config.num_experts, config.hidden_size, config.moe_intermediate_size
        self.num_experts = e
        self.gate_up_proj = zoo.meta_parameter(e, 2 * i, h, dtype=dtype)
        self.down_proj = zoo.meta_parameter(e, h, i, dtype=dtype)

    def forward(self, hidden_states, top_k_index, top_k_weights):
        raise NotImplementedError("structure only: built on the meta device")


class Qwen3MoeSparseMoeBlock(nn.Module):
    def __init__(self, config, *, dtype):
        super().__init__()
        self.gate = Qwen3MoeTopKRouter(config, dtype=dtype)
        self.experts = Qwen3MoeExperts(config, dtype=dtype)

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class Qwen3MoeMLP(nn.Module):
    """The dense MLP of the layers in mlp_only_layers (none in this checkpoint)."""

    def __init__(self, config, *, dtype):
        super().__init__()
        h, i = config.hidden_size, config.intermediate_size
        self.gate_proj = zoo.linear(h, i, False, dtype)
        self.up_proj = zoo.linear(h, i, False, dtype)
        self.down_proj = zoo.linear(i, h, False, dtype)

    def forward(self, x):
        raise NotImplementedError("structure only: built on the meta device")


class Qwen3MoeDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx, *, dtype):
        super().__init__()
        self.self_attn = Qwen3MoeAttention(config, layer_idx, dtype=dtype)
        sparse = layer_idx not in config.mlp_only_layers and (
            config.num_experts > 0 and (layer_idx + 1) % config.decoder_sparse_step == 0
        )
        self.mlp = Qwen3MoeSparseMoeBlock(config, dtype=dtype) if sparse else Qwen3MoeMLP(config, dtype=dtype)
        self.input_layernorm = Qwen3MoeRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)
        self.post_attention_layernorm = Qwen3MoeRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)

    def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                use_cache=False, cache_position=None, position_embeddings=None, **kwargs):
        raise NotImplementedError("structure only: built on the meta device")


Qwen3MoeModel, Qwen3MoeForCausalLM = zoo.causal_lm_classes(
    "Qwen3Moe", __name__, Qwen3MoeDecoderLayer, Qwen3MoeRMSNorm, Qwen3MoeRotaryEmbedding
)


def build(broken: bool = False):
    """(model, export arguments). ``broken``: the two mistakes below."""
    model = Qwen3MoeForCausalLM(CONFIG, dtype=getattr(torch, CONFIG.torch_dtype))
    # The attention blocks own their layout, so the tp plan's self_attn rules are left out
    # (pasted, each would only be template-skipped-owned, once per layer).
    drop = ["layers.*.self_attn."]
    if not broken:
        # ... and so are the dense-MLP rules, which name no module of this checkpoint.
        drop += DENSE_MLP_RULES
    # Broken (2 of 2): the dense-MLP rules pasted too -> unused-template-rule, three times.
    extras = {
        # Broken (1 of 2): tp=8 > 4 KV heads. k_proj/v_proj are [512, 2048] = 4 heads of
        # 128 rows; over 8 devices half of them get no KV head -> empty-shard, per layer.
        "mesh": BROKEN_MESH if broken else MESH,
        "providers": zoo.vocab_parallel_providers("tp"),
        "templates": [
            zoo.hf_template("ep", HF_BASE_MODEL_EP_PLAN),
            zoo.hf_template("tp", HF_BASE_MODEL_TP_PLAN, drop=drop),
        ],
        "pipeline": zoo.hf_pipeline(zoo.published_plan(zoo.TRANSFORMERS_5, "qwen3_moe", "base_model_pp_plan")),
        "blocks": zoo.head_blocks(model),
    }
    return model, extras


def build_broken():
    return build(broken=True)


if __name__ == "__main__":
    sys.exit(zoo.main(NAME, build))

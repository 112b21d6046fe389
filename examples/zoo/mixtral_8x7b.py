"""Mixtral-8x7B (mixture of experts): the module structure, its plan, and a broken variant.

    /usr/bin/python3 examples/zoo/mixtral_8x7b.py       # writes out/mixtral-8x7b.json and out/mixtral-8x7b-broken.json
    python3 -m shardplan.torch examples/zoo/mixtral_8x7b.py:build --out /tmp/mixtral.json --plan

Built with torch.nn on the meta device with the module and parameter names of
transformers 5's ``MixtralForCausalLM`` (src/transformers/models/mixtral/
modeling_mixtral.py): each layer's ``mlp`` is a ``MixtralSparseMoeBlock`` with a
router (``gate``) and the 8 experts as two stacked tensors
(``experts.gate_up_proj`` [8, 2 x 14336, 4096], ``experts.down_proj``
[8, 4096, 14336]).

Configuration: https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as zoo  # noqa: E402

NAME = "mixtral-8x7b"

# mistralai/Mixtral-8x7B-v0.1 config.json (the values that shape parameters).
CONFIG = SimpleNamespace(
    architectures=["MixtralForCausalLM"],
    model_type="mixtral",
    hidden_act="silu",
    hidden_size=4096,
    intermediate_size=14336,         # each expert's MLP size
    num_hidden_layers=32,
    num_attention_heads=32,
    num_key_value_heads=8,
    head_dim=4096 // 32,             # not in config.json: hidden_size / num_attention_heads = 128
    num_local_experts=8,
    num_experts_per_tok=2,
    vocab_size=32000,
    tie_word_embeddings=False,
    rms_norm_eps=1e-05,
    rope_theta=1000000.0,
    max_position_embeddings=32768,
    sliding_window=None,
    torch_dtype="bfloat16",
)

# MixtralConfig.base_model_tp_plan as transformers 5 publishes it (hf_plans/, verbatim).
HF_BASE_MODEL_TP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "mixtral", "base_model_tp_plan")
# ... and its base_model_ep_plan.
HF_BASE_MODEL_EP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "mixtral", "base_model_ep_plan")
# MixtralForCausalLM._tp_plan = {"lm_head": "colwise_gather_output"}: provided by the
# model adapter here (zoo.vocab_parallel_providers).

# 2 nodes of 8 GPUs: expert parallel 4 (2 experts each), tensor parallel 2, data parallel 2.
MESH = {"dp": 2, "ep": 4, "tp": 2}


MixtralRMSNorm = zoo.rms_norm_class("Mixtral", __name__)

MixtralRotaryEmbedding = zoo.rotary_embedding_class("Mixtral", __name__)


MixtralAttention = zoo.gqa_attention_class("MixtralAttention", __name__)


class MixtralTopKRouter(nn.Module):
    def __init__(self, config, *, dtype):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.num_experts = config.num_local_experts
        self.weight = zoo.meta_parameter(config.num_local_experts, config.hidden_size, dtype=dtype)

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class MixtralExperts(nn.Module):
    """The 8 experts as stacked tensors (gate and up projections fused)."""

    def __init__(self, config, *, dtype):
        super().__init__()
        e, h, i = config.num_local_experts, config.hidden_size, config.intermediate_size
        self.num_experts = e
        self.gate_up_proj = zoo.meta_parameter(e, 2 * i, h, dtype=dtype)
        self.down_proj = zoo.meta_parameter(e, h, i, dtype=dtype)

    def forward(self, hidden_states, top_k_index, top_k_weights):
        raise NotImplementedError("structure only: built on the meta device")


class MixtralSparseMoeBlock(nn.Module):
    def __init__(self, config, *, dtype):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.gate = MixtralTopKRouter(config, dtype=dtype)
        self.experts = MixtralExperts(config, dtype=dtype)

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class MixtralDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx, *, dtype):
        super().__init__()
        self.self_attn = MixtralAttention(config, layer_idx, dtype=dtype)
        self.mlp = MixtralSparseMoeBlock(config, dtype=dtype)
        self.input_layernorm = MixtralRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)
        self.post_attention_layernorm = MixtralRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)

    def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                use_cache=False, cache_position=None, position_embeddings=None, **kwargs):
        raise NotImplementedError("structure only: built on the meta device")


MixtralModel, MixtralForCausalLM = zoo.causal_lm_classes(
    "Mixtral", __name__, MixtralDecoderLayer, MixtralRMSNorm, MixtralRotaryEmbedding
)


def build(broken: bool = False):
    """(model, export arguments). ``broken``: the mistake below."""
    config = CONFIG
    if broken:
        # Broken: lm_head tied to embed_tokens (a fine-tuning recipe that ties the head to
        # save memory, tie_word_embeddings=True), while the adapter still gives the two
        # names different layouts: embed_tokens vocab rows S(0), lm_head row-parallel S(1)
        # (its hidden columns). One tensor, two placements -> shared-conflict, an error;
        # planning needs a consistent set of owners, so it stops there.
        config = SimpleNamespace(**{**vars(CONFIG), "tie_word_embeddings": True})
    model = MixtralForCausalLM(config, dtype=getattr(torch, config.torch_dtype))
    extras = {
        "mesh": MESH,
        "providers": zoo.vocab_parallel_providers("tp", head_weight="S(1)" if broken else "S(0)"),
        "templates": [
            zoo.hf_template("ep", HF_BASE_MODEL_EP_PLAN),
            # self_attn rules left out: every MixtralAttention owns that layout.
            zoo.hf_template("tp", HF_BASE_MODEL_TP_PLAN, drop=("layers.*.self_attn.",)),
        ],
        "pipeline": zoo.hf_pipeline(zoo.published_plan(zoo.TRANSFORMERS_5, "mixtral", "base_model_pp_plan")),
        "blocks": zoo.head_blocks(model),
    }
    return model, extras


def build_broken():
    return build(broken=True)


if __name__ == "__main__":
    sys.exit(zoo.main(NAME, build))

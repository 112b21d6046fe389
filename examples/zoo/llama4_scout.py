"""Llama-4-Scout-17B-16E (mixture of experts): the module structure, its plans, and a broken variant.

    /usr/bin/python3 examples/zoo/llama4_scout.py       # writes out/llama4-scout.json and out/llama4-scout-broken.json
    python3 -m shardplan.torch examples/zoo/llama4_scout.py:build --out /tmp/scout.json --plan

Built with torch.nn on the meta device with the module and parameter names of
transformers' ``Llama4ForCausalLM`` (src/transformers/models/llama4/
modeling_llama4.py; the same in 4.57 and 5.15), the text model of the published
``Llama4ForConditionalGeneration``. Every layer's ``feed_forward`` is a
``Llama4TextMoe``: a ``router`` (a Linear to the 16 experts), the routed
experts as two stacked tensors stored as ``x @ W`` takes them, not as
nn.Linear does (``experts.gate_up_proj`` [16, 5120, 2 x 8192],
``experts.down_proj`` [16, 8192, 5120]: hence "row because not linear" in the
published plans), and one ``shared_expert`` MLP that every token goes through.

Configuration: https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E (text_config)
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as zoo  # noqa: E402

NAME = "llama4-scout"

# Llama-4-Scout-17B-16E text_config (the values that shape parameters). They are also
# Llama4TextConfig's defaults.
CONFIG = SimpleNamespace(
    architectures=["Llama4ForCausalLM"],
    model_type="llama4_text",        # the text model's (Llama4TextConfig)
    hidden_act="silu",
    hidden_size=5120,
    intermediate_size=8192,          # each routed expert's and the shared expert's MLP size
    intermediate_size_mlp=16384,     # the dense MLP's, for layers that are not MoE (none here)
    num_hidden_layers=48,
    num_attention_heads=40,
    num_key_value_heads=8,           # 5 query heads per KV head
    head_dim=128,
    num_local_experts=16,
    num_experts_per_tok=1,           # top-1 routing, plus the shared expert
    interleave_moe_layer_step=1,     # every layer is a MoE layer
    vocab_size=202048,
    tie_word_embeddings=False,
    attention_bias=False,
    use_qk_norm=True,                # an L2 norm without parameters
    rms_norm_eps=1e-05,
    torch_dtype="bfloat16",
)
CONFIG.moe_layers = list(range(CONFIG.interleave_moe_layer_step - 1, CONFIG.num_hidden_layers,
                               CONFIG.interleave_moe_layer_step))

# Llama4TextConfig.base_model_tp_plan and base_model_ep_plan as transformers 5 publishes
# them (hf_plans/, verbatim).
HF_BASE_MODEL_TP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "llama4", "base_model_tp_plan")
HF_BASE_MODEL_EP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "llama4", "base_model_ep_plan")
# Llama4ForCausalLM._tp_plan = {"lm_head": "colwise_gather_output"}: provided by the model
# adapter here (zoo.vocab_parallel_providers). Llama 4 publishes no pipeline plan.

# Rules of the published plans that name the dense MLP (Llama4TextMLP as a layer's
# feed_forward) of layers that are not MoE. Scout has none, so they match nothing here.
DENSE_MLP_RULES = ("layers.*.feed_forward.gate_proj", "layers.*.feed_forward.up_proj",
                   "layers.*.feed_forward.down_proj")

# 4 nodes of 8 GPUs: tensor parallel 4 (of the 8 KV heads) inside each expert and the
# attention, expert parallel 4 (4 of the 16 experts per group), data parallel 2.
MESH = {"dp": 2, "ep": 4, "tp": 4}
# The broken variant: expert parallel 32 over 16 experts, as if every GPU of 4 nodes held
# its own expert.
BROKEN_MESH = {"ep": 32, "tp": 1}


Llama4TextRMSNorm = zoo.rms_norm_class("Llama4Text", __name__)


Llama4TextRotaryEmbedding = zoo.rotary_embedding_class("Llama4Text", __name__)


# Grouped-query attention; its q/k L2 norm (on three layers of four, with RoPE) has no
# parameters.
Llama4TextAttention = zoo.gqa_attention_class("Llama4TextAttention", __name__)


class Llama4TextExperts(nn.Module):
    """The routed experts as stacked tensors, [experts, hidden, 2 x intermediate] (gate and
    up fused along the last dim) and [experts, intermediate, hidden], multiplied as x @ W."""

    def __init__(self, config, *, dtype):
        super().__init__()
        e, h, i = config.num_local_experts, config.hidden_size, config.intermediate_size
        self.num_experts = e
        self.gate_up_proj = zoo.meta_parameter(e, h, 2 * i, dtype=dtype)
        self.down_proj = zoo.meta_parameter(e, i, h, dtype=dtype)

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class Llama4TextMLP(nn.Module):
    def __init__(self, config, intermediate_size, *, dtype):
        super().__init__()
        h = config.hidden_size
        self.gate_proj = zoo.linear(h, intermediate_size, False, dtype)
        self.up_proj = zoo.linear(h, intermediate_size, False, dtype)
        self.down_proj = zoo.linear(intermediate_size, h, False, dtype)

    def forward(self, x):
        raise NotImplementedError("structure only: built on the meta device")


class Llama4Router(nn.Linear):
    """nn.Linear(hidden, experts, bias=False), returning the top-k scores and the logits."""

    def __init__(self, config, *, dtype):
        nn.Module.__init__(self)
        self.in_features, self.out_features = config.hidden_size, config.num_local_experts
        self.weight = zoo.meta_parameter(config.num_local_experts, config.hidden_size, dtype=dtype)
        self.register_parameter("bias", None)
        self.top_k = config.num_experts_per_tok

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class Llama4TextMoe(nn.Module):
    def __init__(self, config, *, dtype):
        super().__init__()
        self.experts = Llama4TextExperts(config, dtype=dtype)
        self.router = Llama4Router(config, dtype=dtype)
        self.shared_expert = Llama4TextMLP(config, config.intermediate_size, dtype=dtype)

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class Llama4TextDecoderLayer(nn.Module):
    def __init__(self, config, layer_idx, *, dtype):
        super().__init__()
        self.self_attn = Llama4TextAttention(config, layer_idx, dtype=dtype)
        if layer_idx in config.moe_layers:
            self.feed_forward = Llama4TextMoe(config, dtype=dtype)
        else:
            self.feed_forward = Llama4TextMLP(config, config.intermediate_size_mlp, dtype=dtype)
        self.input_layernorm = Llama4TextRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)
        self.post_attention_layernorm = Llama4TextRMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)

    def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                use_cache=False, cache_position=None, position_embeddings=None, **kwargs):
        raise NotImplementedError("structure only: built on the meta device")


Llama4TextModel, Llama4ForCausalLM = zoo.causal_lm_classes(
    "Llama4Text", __name__, Llama4TextDecoderLayer, Llama4TextRMSNorm, Llama4TextRotaryEmbedding
)
Llama4ForCausalLM.__name__ = Llama4ForCausalLM.__qualname__ = "Llama4ForCausalLM"


def build(broken: bool = False):
    """(model, export arguments). ``broken``: the mistake below."""
    model = Llama4ForCausalLM(CONFIG, dtype=getattr(torch, CONFIG.torch_dtype))
    # The attention blocks own their layout, so both plans' self_attn rules are left out,
    # and so are the dense-MLP rules, which name no module of this checkpoint. The two
    # plans are templates on two mesh axes: the routed experts split over `ep` by expert
    # (grouped_gemm) and inside each expert over `tp` (packed_rowwise: the fused gate and
    # up halves of the last dim; colwise on down_proj's [E, intermediate, hidden]: dim -2).
    drop = ("layers.*.self_attn.",) + DENSE_MLP_RULES
    extras = {
        # Broken: ep=32 > 16 experts: half the devices hold no expert -> empty-shard.
        "mesh": BROKEN_MESH if broken else MESH,
        "providers": zoo.vocab_parallel_providers("tp"),
        "templates": [
            zoo.hf_template("ep", HF_BASE_MODEL_EP_PLAN, drop=drop),
            zoo.hf_template("tp", HF_BASE_MODEL_TP_PLAN, drop=drop),
        ],
        "blocks": zoo.head_blocks(model),
    }
    return model, extras


def build_broken():
    return build(broken=True)


if __name__ == "__main__":
    sys.exit(zoo.main(NAME, build))

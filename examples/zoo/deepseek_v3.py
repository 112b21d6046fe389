"""DeepSeek-V3 (671B, MLA attention, 256 routed experts): the module structure, its plan,
a broken variant, and its pre-training layout (one pipeline stage on 128 H800s).

    /usr/bin/python3 examples/zoo/deepseek_v3.py        # writes out/deepseek-v3.json, out/deepseek-v3-broken.json,
                                                        # out/deepseek-v3-train*.json
    python3 -m shardplan.torch examples/zoo/deepseek_v3.py:build --out /tmp/dsv3.json --plan
    python3 -m shardplan.torch examples/zoo/deepseek_v3.py:build_train --out /tmp/dsv3-train.json --plan

Built with torch.nn on the meta device with the module and parameter names of
transformers 5's ``DeepseekV3ForCausalLM`` (src/transformers/models/deepseek_v3/
modeling_deepseek_v3.py):

- 61 decoder layers, each with multi-head latent attention (MLA): queries through a
  low-rank bottleneck (q_a_proj -> q_a_layernorm -> q_b_proj), keys and values
  through a shared latent plus a decoupled rotary key (kv_a_proj_with_mqa ->
  kv_a_layernorm -> kv_b_proj), and o_proj;
- layers 0-2 have a dense MLP (first_k_dense_replace = 3); layers 3-60 a
  ``DeepseekV3MoE``: 256 routed experts stored as two stacked tensors
  (``experts.gate_up_proj`` [256, 2 x 2048, 7168], ``experts.down_proj``
  [256, 7168, 2048]), the router (``gate``) and one shared expert
  (``shared_experts``, a 2048-wide MLP).

Stacked experts keep the module count small: the whole model is about 1,000
modules and builds in a few milliseconds on the meta device. (transformers 4.x
kept one module per expert: 58 x 256 x 4 more modules, the layout the 4.x plan
of the broken variant was written for.) The published checkpoint stores most
Linear weights as float8_e4m3fn with 128 x 128 block scales; this script builds
the bfloat16 model transformers loads (config.json "torch_dtype": "bfloat16";
Debian's torch 1.13 has no float8 dtype).

Configuration: https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_common as zoo  # noqa: E402

NAME = "deepseek-v3"

# deepseek-ai/DeepSeek-V3 config.json (the values that shape parameters).
CONFIG = SimpleNamespace(
    architectures=["DeepseekV3ForCausalLM"],
    model_type="deepseek_v3",
    hidden_act="silu",
    hidden_size=7168,
    intermediate_size=18432,         # the dense MLP of layers 0-2
    moe_intermediate_size=2048,      # each routed expert, and the shared expert (x n_shared_experts)
    num_hidden_layers=61,
    num_attention_heads=128,
    num_key_value_heads=128,
    q_lora_rank=1536,
    kv_lora_rank=512,
    qk_nope_head_dim=128,
    qk_rope_head_dim=64,             # q/k head = 128 + 64 = 192
    v_head_dim=128,
    n_routed_experts=256,
    n_shared_experts=1,
    num_experts_per_tok=8,
    n_group=8,
    topk_group=4,
    first_k_dense_replace=3,
    moe_layer_freq=1,
    num_nextn_predict_layers=1,      # the MTP module: not part of DeepseekV3ForCausalLM
    vocab_size=129280,
    tie_word_embeddings=False,
    attention_bias=False,
    rms_norm_eps=1e-06,
    rope_theta=10000,
    max_position_embeddings=163840,
    torch_dtype="bfloat16",
)

# DeepseekV3Config.base_model_tp_plan as transformers 5 publishes it (hf_plans/,
# verbatim). It has no attention rules: MLA's layout is declared by the attention itself
# below.
HF_BASE_MODEL_TP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "deepseek_v3", "base_model_tp_plan")
# ... and its base_model_ep_plan.
HF_BASE_MODEL_EP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_5, "deepseek_v3", "base_model_ep_plan")
# DeepseekV3ForCausalLM._tp_plan = {"lm_head": "colwise_gather_output"}: provided by the
# model adapter here (zoo.vocab_parallel_providers).

# The same plan as transformers 4.57 publishes it, for the broken variant: written for
# one module per expert (transformers 4.x's DeepseekV3MoE), with its 4.x style names
# (local_colwise, local_rowwise, local, gather: docs/planning.md section 3).
HF4_BASE_MODEL_TP_PLAN = zoo.published_plan(zoo.TRANSFORMERS_4, "deepseek_v3", "base_model_tp_plan")

# 16 nodes of 8 GPUs: tensor parallel 8 inside a node, expert parallel 8 (32 experts
# per group), data parallel 2.
MESH = {"dp": 2, "ep": 8, "tp": 8}


DeepseekV3RMSNorm = zoo.rms_norm_class("DeepseekV3", __name__)

DeepseekV3RotaryEmbedding = zoo.rotary_embedding_class("DeepseekV3", __name__, rope_dim="qk_rope_head_dim")


class DeepseekV3Attention(nn.Module):
    """Multi-head latent attention. Owns its tensor-parallel layout, the one of
    DeepSeek's own inference code (DeepSeek-V3 repository, inference/model.py, class
    MLA): the down-projections q_a_proj and kv_a_proj_with_mqa and their norms are
    replicated (``Linear``), the up-projections q_b_proj and kv_b_proj split by heads
    (``ColumnParallelLinear``), o_proj by input columns (``RowParallelLinear``)."""

    def __init__(self, config, layer_idx, *, dtype, tp_axis="tp"):
        super().__init__()
        self.layer_idx = layer_idx
        self.tp_axis = tp_axis
        self.num_heads = config.num_attention_heads
        self.qk_head_dim = config.qk_nope_head_dim + config.qk_rope_head_dim
        self.kv_b_head_dim = config.qk_nope_head_dim + config.v_head_dim
        self.v_head_dim = config.v_head_dim
        h, n, bias = config.hidden_size, config.num_attention_heads, config.attention_bias
        self.q_a_proj = zoo.linear(h, config.q_lora_rank, bias, dtype)
        self.q_a_layernorm = DeepseekV3RMSNorm(config.q_lora_rank, dtype=dtype)
        self.q_b_proj = zoo.linear(config.q_lora_rank, n * self.qk_head_dim, False, dtype)
        self.kv_a_proj_with_mqa = zoo.linear(h, config.kv_lora_rank + config.qk_rope_head_dim, bias, dtype)
        self.kv_a_layernorm = DeepseekV3RMSNorm(config.kv_lora_rank, dtype=dtype)
        self.kv_b_proj = zoo.linear(config.kv_lora_rank, n * self.kv_b_head_dim, False, dtype)
        self.o_proj = zoo.linear(n * config.v_head_dim, h, bias, dtype)

    def forward(self, hidden_states, position_embeddings, attention_mask, past_key_values=None,
                cache_position=None, **kwargs):
        raise NotImplementedError("structure only: built on the meta device")

    def parallel_module_spec(self):
        return zoo.attention_family(
            self.tp_axis,
            column=("q_b_proj", "kv_b_proj"),
            row=("o_proj",),
            replicated=("q_a_proj.weight", "q_a_layernorm.weight", "kv_a_proj_with_mqa.weight",
                        "kv_a_layernorm.weight"),
        )

    def head_blocks(self):
        # q_b_proj rows: heads of 192 (128 no-rope + 64 rope); kv_b_proj rows: heads of
        # 256 (128 key + 128 value); o_proj columns: heads of v_head_dim 128.
        return {"q_b_proj.weight": [self.qk_head_dim, 1], "kv_b_proj.weight": [self.kv_b_head_dim, 1],
                "o_proj.weight": [1, self.v_head_dim]}


class DeepseekV3MLP(nn.Module):
    def __init__(self, config, intermediate_size=None, *, dtype):
        super().__init__()
        h = config.hidden_size
        i = config.intermediate_size if intermediate_size is None else intermediate_size
        self.gate_proj = zoo.linear(h, i, False, dtype)
        self.up_proj = zoo.linear(h, i, False, dtype)
        self.down_proj = zoo.linear(i, h, False, dtype)

    def forward(self, x):
        raise NotImplementedError("structure only: built on the meta device")


class DeepseekV3TopkRouter(nn.Module):
    """Sigmoid scores with group-limited top-k (8 groups, top 4 groups, 8 experts)."""

    def __init__(self, config, *, dtype):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.n_routed_experts = config.n_routed_experts
        self.weight = zoo.meta_parameter(config.n_routed_experts, config.hidden_size, dtype=dtype)
        # A buffer, not a parameter: not part of the document.
        self.register_buffer("e_score_correction_bias",
                             torch.empty(config.n_routed_experts, device=zoo.META, dtype=torch.float32))

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class DeepseekV3NaiveMoe(nn.Module):
    """The 256 routed experts as stacked tensors (gate and up projections fused)."""

    def __init__(self, config, *, dtype):
        super().__init__()
        e, h, i = config.n_routed_experts, config.hidden_size, config.moe_intermediate_size
        self.num_experts = e
        self.gate_up_proj = zoo.meta_parameter(e, 2 * i, h, dtype=dtype)
        self.down_proj = zoo.meta_parameter(e, h, i, dtype=dtype)

    def forward(self, hidden_states, top_k_index, top_k_weights):
        raise NotImplementedError("structure only: built on the meta device")


class DeepseekV3MoE(nn.Module):
    def __init__(self, config, *, dtype):
        super().__init__()
        self.experts = DeepseekV3NaiveMoe(config, dtype=dtype)
        self.gate = DeepseekV3TopkRouter(config, dtype=dtype)
        self.shared_experts = DeepseekV3MLP(
            config, intermediate_size=config.moe_intermediate_size * config.n_shared_experts, dtype=dtype
        )

    def forward(self, hidden_states):
        raise NotImplementedError("structure only: built on the meta device")


class DeepseekV3DecoderLayer(nn.Module):
    def __init__(self, config, layer_idx, *, dtype):
        super().__init__()
        self.self_attn = DeepseekV3Attention(config, layer_idx, dtype=dtype)
        if layer_idx >= config.first_k_dense_replace:
            self.mlp = DeepseekV3MoE(config, dtype=dtype)
        else:
            self.mlp = DeepseekV3MLP(config, dtype=dtype)
        self.input_layernorm = DeepseekV3RMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)
        self.post_attention_layernorm = DeepseekV3RMSNorm(config.hidden_size, config.rms_norm_eps, dtype=dtype)

    def forward(self, hidden_states, attention_mask=None, position_ids=None, past_key_values=None,
                use_cache=False, cache_position=None, position_embeddings=None, **kwargs):
        raise NotImplementedError("structure only: built on the meta device")


DeepseekV3Model, DeepseekV3ForCausalLM = zoo.causal_lm_classes(
    "DeepseekV3", __name__, DeepseekV3DecoderLayer, DeepseekV3RMSNorm, DeepseekV3RotaryEmbedding
)


def build(broken: bool = False):
    """(model, export arguments). ``broken``: the mistake below."""
    model = DeepseekV3ForCausalLM(CONFIG, dtype=getattr(torch, CONFIG.torch_dtype))
    # Broken: the tensor-parallel plan of transformers 4.x on the 5.x modules. Its
    # per-expert rules (experts.*.gate_proj, ...) name modules that no longer exist ->
    # unused-template-rule, three times; and its "experts.*" rule (local, i.e. replicate)
    # now matches the stacked expert tensors themselves, so they are no longer split on
    # tp: the plan is still valid, but each device holds 8 times as much of the experts
    # (see the memory per device).
    tp_plan = HF4_BASE_MODEL_TP_PLAN if broken else HF_BASE_MODEL_TP_PLAN
    extras = {
        "mesh": MESH,
        "providers": zoo.vocab_parallel_providers("tp"),
        "templates": [
            zoo.hf_template("ep", HF_BASE_MODEL_EP_PLAN),
            zoo.hf_template("tp", tp_plan),
        ],
        "pipeline": zoo.hf_pipeline(zoo.published_plan(zoo.TRANSFORMERS_5, "deepseek_v3", "base_model_pp_plan")),
        "blocks": zoo.head_blocks(model),
    }
    return model, extras


def build_broken():
    return build(broken=True)


# ---------------------------------------------------------------------------
# Training (README.md, "Training setups")
#
# DeepSeek-V3's pre-training (technical report, arXiv 2412.19437, section 3.2): 2048 H800
# GPUs of 80 GiB; 16-way pipeline parallelism (DualPipe), 64-way expert parallelism
# spanning 8 nodes, ZeRO-1 data parallelism, no tensor parallelism.
#
# The engine does not model pipeline parallelism (every device holds every module of the
# document), so the document is what one pipeline rank builds: the model with only its
# stage's decoder layers, as torchtitan's pipeline split (and torch.distributed.pipelining)
# builds each stage, the other layers deleted and the embedding, final norm and head
# None outside the first and last stages. 61 layers over 16 stages is 4 layers a stage
# (three stages get 3); TRAIN_STAGE is the second stage, 4 MoE layers, the most expert
# weight a stage holds. Its 128 GPUs (2048 / 16) are the mesh:
TRAIN_STAGE = range(4, 8)
# ep=64: each rank holds 256 / 64 = 4 experts of every MoE layer (the published
# base_model_ep_plan on axis ep); dp=2: the two copies of each expert. The non-expert
# weights are data parallel over all 128 (dp x ep), as Megatron's expert-data-parallel
# groups are: ZeRO-1 over shard_axes ["dp", "ep"] shards them 128 ways and the experts,
# already split on ep, over dp only. tp=1: the attention's tensor-parallel layout and the
# published tp plan stay in the document, splitting nothing.
TRAIN_MESH = {"dp": 2, "ep": 64, "tp": 1}
# The precisions of the report's section 3.3: bf16 weights (the FP8 GEMMs quantize on the
# fly; the checkpoint is the bf16 model), FP32 master weights and gradients, AdamW's two
# moments in BF16. Activations of one 4096-token sequence (the pre-training length). The
# model description (for the activations) comes from CONFIG, the whole model: 61 layers of
# activations is what a 1F1B pipeline's first stage keeps (16 micro-batches in flight x 61
# / 16 layers), an upper bound for every stage.
TRAIN_TRAINING = {
    "zero": 1,
    "shard_axes": ["dp", "ep"],
    "optimizer": "adamw",
    "optimizer_dtype": "bfloat16",
    "master_dtype": "float32",
    "grad_dtype": "float32",
    "activations": {"micro_batch": 1, "seq_len": 4096, "recompute": "full"},
    "device_memory": "80GiB",
}

#: The training setups: out/deepseek-v3-<setup>.json.
#: train: the layout above with every layer recomputed: fits.
#: train-selective: only the attention scores recomputed, every other activation kept in
#: bf16: exceeds (DeepSeek-V3 keeps them in FP8 and recomputes the norms and the MLA
#: up-projections, which the model of activations cannot express).
TRAINING_SETUPS = ("train", "train-selective")


def pipeline_stage(model: nn.Module, layers) -> nn.Module:
    """``model`` as one pipeline rank holds it (torchtitan's pipeline split): only the
    decoder layers ``layers`` (a ModuleDict keyed by their layer numbers, so that every
    name stays the same), the embedding only with layer 0, the final norm and the head
    only with the last layer."""
    base = model.model
    layers = list(layers)
    count = len(base.layers)
    base.layers = nn.ModuleDict({str(i): base.layers[i] for i in layers})
    if 0 not in layers:
        base.embed_tokens = None
    if count - 1 not in layers:
        base.norm = None
        model.lm_head = None
    return model


def build_training(setup: str = "train"):
    """(model, export arguments) of one training setup (``TRAINING_SETUPS``)."""
    if setup not in TRAINING_SETUPS:
        raise ValueError(f"unknown setup {setup!r} (known: {', '.join(TRAINING_SETUPS)})")
    model = pipeline_stage(DeepseekV3ForCausalLM(CONFIG, dtype=getattr(torch, CONFIG.torch_dtype)), TRAIN_STAGE)
    training = dict(TRAIN_TRAINING)
    if setup == "train-selective":
        training["activations"] = dict(training["activations"], recompute="selective")
    extras = {
        "mesh": TRAIN_MESH,
        # No providers and no pipeline plan: this stage has no embedding, final norm or
        # head. The published plans, less the dense-MLP rules (this stage's layers are all
        # MoE layers: those rules would match nothing).
        "templates": [
            zoo.hf_template("ep", HF_BASE_MODEL_EP_PLAN),
            zoo.hf_template("tp", HF_BASE_MODEL_TP_PLAN, drop=DENSE_MLP_RULES),
        ],
        "blocks": zoo.head_blocks(model),
        "training": training,
    }
    return model, extras


#: The tp plan's rules for the dense MLP of layers 0-2.
DENSE_MLP_RULES = ("layers.*.mlp.gate_proj", "layers.*.mlp.up_proj", "layers.*.mlp.down_proj")


def build_train():
    return build_training("train")


def build_train_selective():
    return build_training("train-selective")


TRAINING = {"train": build_train, "train-selective": build_train_selective}


if __name__ == "__main__":
    sys.exit(zoo.main(NAME, build, training=TRAINING))

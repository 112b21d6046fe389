"""Small torch models for test_torch.py and its command-line runs
(``python -m shardplan.torch tests_helper_module:factory``, run from tests/)."""

import torch
from torch import nn

MESH = "dp=2,tp=2"

TP_TEMPLATE = {
    "axis": "tp",
    "rules": {
        "h.*.attn.c_attn": "colwise",
        "h.*.attn.c_proj": "rowwise",
        "h.*.mlp.c_fc": "colwise",
        "h.*.mlp.c_proj": "rowwise",
    },
}


def embedding_provider(embed="S(0)", head="S(0)"):
    """Providers for the tied embedding: wte and lm_head own the one weight."""
    return {
        "sharding": {
            "wte": {"params": {"weight": {"tp": embed}}, "in_src": {}, "in_dst": {}},
            "lm_head": {"params": {"weight": {"tp": head}}, "in_src": {}, "in_dst": {}},
        }
    }


class Attention(nn.Module):
    def __init__(self, dim, device=None, dtype=None):
        super().__init__()
        self.c_attn = nn.Linear(dim, 3 * dim, device=device, dtype=dtype)
        self.c_proj = nn.Linear(dim, dim, device=device, dtype=dtype)

    def forward(self, hidden_states, attention_mask=None):
        q, k, v = self.c_attn(hidden_states).chunk(3, dim=-1)
        w = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        return self.c_proj(w @ v)


class MLP(nn.Module):
    def __init__(self, dim, device=None, dtype=None):
        super().__init__()
        self.c_fc = nn.Linear(dim, 4 * dim, device=device, dtype=dtype)
        self.c_proj = nn.Linear(4 * dim, dim, device=device, dtype=dtype)

    def forward(self, x):
        return self.c_proj(torch.relu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, dim, device=None, dtype=None):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, device=device, dtype=dtype)
        self.attn = Attention(dim, device, dtype)
        self.ln_2 = nn.LayerNorm(dim, device=device, dtype=dtype)
        self.mlp = MLP(dim, device, dtype)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyGPT(nn.Module):
    """GPT-2 in miniature; lm_head.weight is wte.weight (tied)."""

    def __init__(self, vocab=64, dim=16, layers=2, positions=32, device="meta", dtype=None):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim, device=device, dtype=dtype)
        self.wpe = nn.Embedding(positions, dim, device=device, dtype=dtype)
        self.h = nn.ModuleList(Block(dim, device, dtype) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim, device=device, dtype=dtype)
        self.lm_head = nn.Linear(dim, vocab, bias=False, device=device, dtype=dtype)
        self.lm_head.weight = self.wte.weight

    def forward(self, input_ids, position_ids=None):
        x = self.wte(input_ids) + self.wpe(position_ids)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def factory():
    """The CLI's model: TinyGPT with the tp template and the tied embedding provider."""
    return TinyGPT(), {"providers": embedding_provider(), "templates": [TP_TEMPLATE]}


def factory_conflict():
    """The tied embedding declared S(0) by wte and S(1) by lm_head."""
    return TinyGPT(), {"mesh": MESH, "providers": embedding_provider("S(0)", "S(1)")}


def bare_model():
    """Just the model, no extras."""
    return TinyGPT()

"""A small language model, standing in for your own (docs/pytorch.md)."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, device=None):
        super().__init__()
        self.norm = nn.LayerNorm(dim, device=device)
        self.up = nn.Linear(dim, 4 * dim, device=device)
        self.down = nn.Linear(4 * dim, dim, device=device)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(self.norm(x))))


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=512, layers=4, device=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, device=device)
        self.layers = nn.ModuleList(Block(dim, device) for _ in range(layers))
        self.lm_head = nn.Linear(dim, vocab, bias=False, device=device)
        self.lm_head.weight = self.embed.weight  # tied: one tensor, two names

    def forward(self, input_ids):
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(x)


def build():
    """For `python -m shardplan.torch tinylm:build`: the model, on the meta device."""
    return TinyLM(device="meta")


def build_planned():
    """The model and how to shard it: the tied embedding owned by the model
    (vocab-parallel, both names), the blocks by a tensor-parallel template."""
    embed = {"params": {"weight": {"tp": "S(0)"}}, "in_src": {}, "in_dst": {}}
    tp = {"axis": "tp", "rules": {"layers.*.up": "colwise", "layers.*.down": "rowwise"}}
    return TinyLM(device="meta"), {
        "providers": {"sharding": {"embed": embed, "lm_head": embed}},
        "templates": [tp],
    }


def build_conflicting():
    """As build_planned, but lm_head declares the tied weight split along the
    other dimension: one tensor cannot be laid out two ways."""
    model, extras = build_planned()
    lm_head = {"params": {"weight": {"tp": "S(1)"}}, "in_src": {}, "in_dst": {}}
    extras["providers"]["sharding"]["lm_head"] = lm_head
    return model, extras

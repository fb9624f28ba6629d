#!/usr/bin/env python3
"""Exports a Llama-style example model: RMSNorm, rotary position embeddings,
grouped-query attention, a SwiGLU MLP, a causal mask and a head tied to the
token embedding.

Run with Debian's Python (python3-torch 1.13, python3-onnx) from this
directory:  /usr/bin/python3 make_model.py
Writes model.onnx, data/ids.npy and data/expected/logits.npy (PyTorch's
output for that batch), and task/ (a synthetic training batch). The RoPE
tables are buffers (exported as initializers like weights: train with
--freeze '^rope_'); the causal mask is a -inf buffer, which dtc imports as a
constant. The outputs are committed.
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from export_example import export  # noqa: E402

VOCAB, DIM, HEADS, KV_HEADS, HIDDEN, LAYERS, SEQ, BATCH = 64, 32, 4, 2, 64, 2, 8, 2
HEAD_DIM = DIM // HEADS


class RMSNorm(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(DIM))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(HEADS * HEAD_DIM, DIM, bias=False)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.wk(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.wv(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # Grouped-query attention: each key/value head serves HEADS/KV_HEADS
        # query heads.
        group = HEADS // KV_HEADS
        k = k[:, :, None].expand(b, KV_HEADS, group, t, HEAD_DIM).reshape(b, HEADS, t, HEAD_DIM)
        v = v[:, :, None].expand(b, KV_HEADS, group, t, HEAD_DIM).reshape(b, HEADS, t, HEAD_DIM)
        att = torch.softmax(q @ k.transpose(-2, -1) / HEAD_DIM ** 0.5 + mask, dim=-1)
        return self.wo((att @ v).transpose(1, 2).reshape(b, t, DIM))


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN, bias=False)
        self.w3 = nn.Linear(DIM, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)

    def forward(self, x):
        return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm()
        self.attn = Attention()
        self.mlp_norm = RMSNorm()
        self.mlp = SwiGLU()

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.attn_norm(x), cos, sin, mask)
        return x + self.mlp(self.mlp_norm(x))


class TinyLlama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
        angles = torch.outer(torch.arange(SEQ).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("rope_cos", angles.cos())
        self.register_buffer("rope_sin", angles.sin())
        self.register_buffer("causal_mask", torch.full((SEQ, SEQ), float("-inf")).triu(1))

    def forward(self, ids):
        h = self.embed(ids)
        for layer in self.layers:
            h = layer(h, self.rope_cos, self.rope_sin, self.causal_mask)
        return self.norm(h) @ self.embed.weight.t()  # tied head


def build_model():
    """The example model with its exported weights (deterministic)."""
    torch.manual_seed(0)
    model = TinyLlama().eval()
    with torch.no_grad():  # distinct norm weights (see tiny_transformer)
        for module in model.modules():
            if isinstance(module, RMSNorm):
                module.weight.add_(0.1 * torch.randn(DIM))
    return model


def main():
    export(build_model(), VOCAB, SEQ, BATCH)


if __name__ == "__main__":
    main()

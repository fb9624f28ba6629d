#!/usr/bin/env python3
"""Exports the example model, a one-block transformer language model.

Run with Debian's Python (python3-torch 1.13, python3-onnx) from this
directory:  /usr/bin/python3 make_model.py
Writes model.onnx, data/ids.npy (a batch of token ids),
data/expected/logits.npy (PyTorch's output for that batch, the reference
dtc's executor is compared with) and task/ (a synthetic training batch: each
label is the next token, counting up by one modulo the vocabulary, a task
the model can learn). The outputs are committed.
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from export_example import export  # noqa: E402

VOCAB, DIM, HEADS, SEQ, BATCH = 64, 32, 4, 8, 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.fc = nn.Linear(DIM, 4 * DIM)
        self.out = nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(DIM, dim=-1)
        heads = lambda z: z.view(b, t, HEADS, d // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // HEADS) ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(SEQ, DIM)
        self.block = Block()
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        h = self.block(self.wte(ids) + self.wpe(pos))
        return self.head(self.ln_f(h))


def build_model():
    """The example model with its exported weights (deterministic)."""
    torch.manual_seed(0)
    model = TinyLM().eval()
    # Fresh LayerNorms all hold ones and zeros, and the exporter would merge
    # identical initializers into one (tying the three norms): perturb them.
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.add_(0.1 * torch.randn(DIM))
                module.bias.add_(0.1 * torch.randn(DIM))
    return model


def main():
    export(build_model(), VOCAB, SEQ, BATCH)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Four-layer variants of the two example models, for the remat tests.

Run with Debian's Python (python3-torch 1.13) from this directory:
    /usr/bin/python3 make_models.py
Writes gpt4/ (the GPT-2-style example with four blocks and dropout on the
attention probabilities and the residual branches, exported in training
mode so that its Dropout nodes stay) and llama4/ (the Llama-style example
with four layers), each with model.onnx and batch/ (ids, labels: the next
token, counting up modulo the vocabulary). The remat tests compare each
policy's run with the run without recomputation, bit for bit, so no
trajectory is needed. The outputs are committed.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                        "examples")


def load(name):
    sys.path.insert(0, os.path.join(EXAMPLES, name))
    import make_model
    sys.path.pop(0)
    del sys.modules["make_model"]
    return make_model


def write_batch(out, vocab, seq, batch):
    os.makedirs(os.path.join(out, "batch"), exist_ok=True)
    starts = torch.randint(0, vocab, (batch, 1))
    ids = (starts + torch.arange(seq)) % vocab
    np.save(os.path.join(out, "batch", "ids.npy"), ids.numpy())
    np.save(os.path.join(out, "batch", "labels.npy"), ((ids + 1) % vocab).numpy())
    return ids


def gpt4():
    gpt = load("tiny_transformer")

    class Block(gpt.Block):
        def __init__(self):
            super().__init__()
            self.attn_drop = nn.Dropout(0.1)
            self.resid_drop = nn.Dropout(0.1)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(gpt.DIM, dim=-1)
            heads = lambda z: z.view(b, t, gpt.HEADS, d // gpt.HEADS).transpose(1, 2)
            q, k, v = heads(q), heads(k), heads(v)
            att = torch.softmax(q @ k.transpose(-2, -1) / (d // gpt.HEADS) ** 0.5, dim=-1)
            y = (self.attn_drop(att) @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.resid_drop(self.proj(y))
            return x + self.resid_drop(self.out(nn.functional.gelu(self.fc(self.ln2(x)))))

    class GPT4(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(gpt.VOCAB, gpt.DIM)
            self.wpe = nn.Embedding(gpt.SEQ, gpt.DIM)
            self.blocks = nn.ModuleList(Block() for _ in range(4))
            self.ln_f = nn.LayerNorm(gpt.DIM)
            self.head = nn.Linear(gpt.DIM, gpt.VOCAB, bias=False)

        def forward(self, ids):
            h = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
            for block in self.blocks:
                h = block(h)
            return self.head(self.ln_f(h))

    torch.manual_seed(0)
    model = GPT4()
    with torch.no_grad():  # distinct norms (see the example's generator)
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.add_(0.1 * torch.randn(gpt.DIM))
                module.bias.add_(0.1 * torch.randn(gpt.DIM))
    os.makedirs("gpt4", exist_ok=True)
    ids = write_batch("gpt4", gpt.VOCAB, gpt.SEQ, gpt.BATCH)
    torch.onnx.export(model.train(), (ids,), "gpt4/model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)


def llama4():
    llama = load("tiny_llama")
    llama.LAYERS = 4
    model = llama.build_model()
    os.makedirs("llama4", exist_ok=True)
    ids = write_batch("llama4", llama.VOCAB, llama.SEQ, llama.BATCH)
    torch.onnx.export(model, (ids,), "llama4/model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False)


if __name__ == "__main__":
    gpt4()
    llama4()

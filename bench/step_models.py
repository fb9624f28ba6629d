#!/usr/bin/env python3
"""The models bench/step_cpu.py times: two tiny language models and a
medium GPT, as PyTorch modules, initialised as GPT-2 is (linear and
embedding weights normal with std 0.02), biases near zero and norms near
one (not all equal: the exporter merges equal initializers into one).

Run with Debian's Python (python3-torch 1.13, python3-onnx):
  /usr/bin/python3 bench/step_models.py NAME DIR
writes DIR/model.onnx (opset 17, the logits output), DIR/task/ids.npy and
DIR/task/labels.npy (one batch, each label the next token). build(NAME)
gives the same module with the same weights (seeded), for PyTorch's side.

  tiny_gpt    3 GPT-2 blocks, d 48, 4 heads, vocabulary 256, batch 8 x 16
  tiny_llama  4 Llama blocks (RMS norm, rotary, SwiGLU, no biases), d 64,
              4 heads, vocabulary 256, batch 8 x 24
  medium_gpt  4 GPT-2 blocks, d 512, 8 heads, sequence 256, vocabulary
              8192 (head tied to the embedding), batch 4: 16.9M parameters
  gpu_gpt     6 GPT-2 blocks, d 2048, 16 heads (head dimension 128),
              sequence 2048, vocabulary 32768 (tied), batch 8: 0.37B
              parameters, the GPU-sized model of scripts/gpu-check.sh

  step_models.py NAME DIR --shapes-only
writes model.onnx without its weights (each initializer refers to external
data that is not there: dtc-compile --shapes-only reads shapes alone, and
dtc-run --init-random draws the values), its batch and sequence dynamic
(dtc-compile --input-shape ids=BATCHxSEQUENCE), for models too large to
carry or to trace at their size here.
"""
import math
import os
import sys

import numpy as np
import torch
from torch import nn

CONFIGS = {
    "tiny_gpt": dict(kind="gpt", layers=3, dim=48, heads=4, vocab=256, seq=16, batch=8),
    "tiny_llama": dict(kind="llama", layers=4, dim=64, heads=4, vocab=256, seq=24, batch=8,
                       hidden=128),
    "medium_gpt": dict(kind="gpt", layers=4, dim=512, heads=8, vocab=8192, seq=256, batch=4),
    "gpu_gpt": dict(kind="gpt", layers=6, dim=2048, heads=16, vocab=32768, seq=2048, batch=8),
}


def causal_attention(q, k, v):
    t = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


class GPTBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        split = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        y = causal_attention(split(q), split(k), split(v))
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab"], c["dim"])
        self.wpe = nn.Embedding(c["seq"], c["dim"])
        self.blocks = nn.ModuleList(GPTBlock(c["dim"], c["heads"]) for _ in range(c["layers"]))
        self.ln_f = nn.LayerNorm(c["dim"])

    def forward(self, ids):
        h = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            h = block(h)
        # The head is the embedding, transposed (tied, as GPT-2's).
        return self.ln_f(h) @ self.wte.weight.t()


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaBlock(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(dim)
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.norm2 = RMSNorm(dim)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        h = self.norm1(x)
        split = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q = rotate(split(self.q(h)), cos, sin)
        k = rotate(split(self.k(h)), cos, sin)
        y = causal_attention(q, k, split(self.v(h)))
        x = x + self.o(y.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["dim"])
        self.blocks = nn.ModuleList(
            LlamaBlock(c["dim"], c["heads"], c["hidden"]) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["dim"])
        self.head = nn.Linear(c["dim"], c["vocab"], bias=False)
        half = c["dim"] // c["heads"] // 2
        inv = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
        angles = torch.outer(torch.arange(c["seq"], dtype=torch.float32), inv)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, ids):
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h, self.cos, self.sin)
        return self.head(self.norm(h))


def build(name):
    """The model NAME with its initial weights (deterministic)."""
    c = CONFIGS[name]
    torch.manual_seed(0)
    model = GPT(c) if c["kind"] == "gpt" else Llama(c)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                module.weight.normal_(0.0, 0.02)
                if getattr(module, "bias", None) is not None:
                    # Near zero, not all equal (the exporter would tie
                    # equal initializers).
                    module.bias.normal_(0.0, 1e-3)
            elif isinstance(module, (nn.LayerNorm, RMSNorm)):
                # Near one, not all equal: the exporter would merge equal
                # initializers (tying the norms).
                module.weight.copy_(1.0 + 0.01 * torch.randn_like(module.weight))
                if getattr(module, "bias", None) is not None:
                    module.bias.copy_(0.01 * torch.randn_like(module.bias))
    return model


def batch(name):
    """ids and labels of the one batch every step trains on."""
    c = CONFIGS[name]
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, c["vocab"], (c["batch"], c["seq"] + 1), generator=g)
    return ids[:, :-1].contiguous(), ids[:, 1:].contiguous()


def parameter_count(name):
    return sum(p.numel() for p in build(name).parameters())


def export(name, directory, shapes_only=False):
    model = build(name).eval()
    ids, labels = batch(name)
    os.makedirs(os.path.join(directory, "task"), exist_ok=True)
    path = os.path.join(directory, "model.onnx")
    # Shapes only: traced on a few tokens (the whole batch's activations
    # would not fit in this machine's memory), batch and sequence dynamic
    # (dtc-compile --input-shape ids=BxT binds them).
    torch.onnx.export(model, (ids[:1, :8] if shapes_only else ids,), path,
                      input_names=["ids"], output_names=["logits"], opset_version=17,
                      do_constant_folding=False,
                      dynamic_axes={"ids": {0: "batch", 1: "sequence"}} if shapes_only else None)
    if shapes_only:
        import onnx
        graph = onnx.load(path)
        for tensor in graph.graph.initializer:
            length = len(tensor.raw_data)
            tensor.ClearField("raw_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", "weights-not-exported.bin"), ("offset", "0"),
                               ("length", str(length))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
        onnx.save(graph, path)
    np.save(os.path.join(directory, "task", "ids.npy"), ids.numpy())
    np.save(os.path.join(directory, "task", "labels.npy"), labels.numpy())


if __name__ == "__main__":
    shapes_only = "--shapes-only" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--shapes-only"]
    if len(args) != 2 or args[0] not in CONFIGS:
        sys.exit("usage: step_models.py {%s} DIR [--shapes-only]" % ",".join(CONFIGS))
    export(args[0], args[1], shapes_only)

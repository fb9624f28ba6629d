#!/usr/bin/env python3
"""Writes the context-parallelism fixtures: sequence-64 variants of both
example models with 8 query heads and 4 key/value heads, and PyTorch's
three-step AdamW trajectory for each.

Run with Debian's Python (python3-torch 1.13, python3-onnx) from this
directory:  /usr/bin/python3 make_models.py
For each model, <model>/model.onnx (opset 17), <model>/batch/ (ids and
labels, a few ignored), <model>/initial/ (the parameters before training)
and <model>/adamw/ (the losses, last gradients and final parameters, as
dtc-run --dump writes them). Models:
  gpt    GPT-2 style: learned positions, LayerNorm, GELU MLP, one fused QKV
         projection with grouped-query heads, a boolean causal mask
         (torch.where, as Hugging Face's GPT-2 writes it).
  gpt_window  the GPT-2 style model with a sliding-window causal mask (a
         key at most 24 tokens back) and the inputs' padding mask
         (`attention_mask`, the last 6 tokens of row 1 padding): a mask ring
         attention reads at each block's key positions.
  llama  examples/tiny_llama at sequence 64 with 8 query and 4 key/value
         heads: RMSNorm, RoPE (buffers: train with --freeze '^rope_'), an
         additive -inf causal mask, SwiGLU, a tied head.
The outputs are committed; test/Integration/train-context-parallel.mlir
holds the matching dtc-compile flags.
"""
import importlib.util
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import make_training_reference as reference  # noqa: E402

VOCAB, DIM, HEADS, KV_HEADS, SEQ, BATCH, LAYERS = 64, 64, 8, 4, 64, 2, 2
HEAD_DIM = DIM // HEADS


class GPTBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, (HEADS + 2 * KV_HEADS) * HEAD_DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.ln2 = nn.LayerNorm(DIM)
        self.fc = nn.Linear(DIM, 4 * DIM)
        self.out = nn.Linear(4 * DIM, DIM)

    def forward(self, x, causal):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(
            [HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
        q = q.view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = k.view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = v.view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        group = HEADS // KV_HEADS
        k = k[:, :, None].expand(b, KV_HEADS, group, t, HEAD_DIM).reshape(b, HEADS, t, HEAD_DIM)
        v = v[:, :, None].expand(b, KV_HEADS, group, t, HEAD_DIM).reshape(b, HEADS, t, HEAD_DIM)
        scores = q @ k.transpose(-2, -1) / HEAD_DIM ** 0.5
        scores = torch.where(causal, scores, torch.tensor(float("-inf")))
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, DIM)
        x = x + self.proj(y)
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, window=None):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(SEQ, DIM)
        self.blocks = nn.ModuleList(GPTBlock() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        causal = torch.ones(SEQ, SEQ, dtype=torch.bool).tril()
        if window is not None:
            causal &= torch.ones(SEQ, SEQ, dtype=torch.bool).triu(-window)
        self.register_buffer("causal", causal)

    def forward(self, ids, attention_mask=None):
        h = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        visible = self.causal
        if attention_mask is not None:
            visible = visible & attention_mask.bool()[:, None, None, :]
        for block in self.blocks:
            h = block(h, visible)
        return self.head(self.ln_f(h))


def build_gpt(window=None):
    torch.manual_seed(0)
    model = GPT(window)
    # Distinct norms (the exporter would merge equal initializers).
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.add_(0.1 * torch.randn(DIM))
                module.bias.add_(0.1 * torch.randn(DIM))
    return model


def build_llama():
    spec = importlib.util.spec_from_file_location(
        "tiny_llama", os.path.join(HERE, "../../../../examples/tiny_llama/make_model.py"))
    llama = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(llama)
    llama.VOCAB, llama.DIM, llama.HEADS, llama.KV_HEADS = VOCAB, DIM, HEADS, KV_HEADS
    llama.SEQ, llama.LAYERS, llama.HEAD_DIM, llama.HIDDEN = SEQ, LAYERS, HEAD_DIM, 2 * DIM
    model = llama.build_model()
    # GPT-2's embedding scale: with N(0, 1) the tied head's logits are in
    # the tens and the loss near 30.
    torch.manual_seed(2)
    with torch.no_grad():
        model.embed.weight.normal_(0, 0.02)
    return model


class Shapes:
    VOCAB = VOCAB


def write(name, build, padded=False):
    torch.manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    labels = torch.roll(ids, -1, dims=1)
    labels[0, -1] = -100
    labels[1, 20] = -100
    inputs, names, batch = (ids,), ["ids"], {"ids": ids, "labels": labels}
    if padded:
        mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
        mask[1, -6:] = 0
        labels[1, -7:] = -100
        inputs, names = (ids, mask), ["ids", "attention_mask"]
        batch["attention_mask"] = mask
    reference.save_dir(f"{name}/batch", batch)
    torch.onnx.export(build().eval(), inputs, f"{name}/model.onnx", input_names=names,
                      output_names=["logits"], opset_version=17, do_constant_folding=False)
    model = build().train()
    if padded:
        model.forward = lambda ids: GPT.forward(model, ids, mask)
    reference.save_dir(f"{name}/initial", dict(model.named_parameters()))
    reference.train(Shapes, model, reference.OPTIMIZERS["adamw"](model.parameters()), ids,
                    labels, f"{name}/adamw")


def main():
    os.chdir(HERE)
    write("gpt", build_gpt)
    write("gpt_window", lambda: build_gpt(window=24), padded=True)
    write("llama", build_llama)


if __name__ == "__main__":
    main()

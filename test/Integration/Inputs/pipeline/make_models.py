#!/usr/bin/env python3
"""Writes the pipeline-parallelism fixtures: a GPT-2-style language model
of 8 blocks (the example model's, narrower) exported at a batch of 32, deep enough for pp=4 with two
virtual stages per rank and wide enough in its batch for 16 microbatches
(the example models have one or two blocks and a batch of 2-4).

Run with Debian's Python (python3-torch 1.13, python3-onnx) from this
directory:  /usr/bin/python3 make_models.py
Writes gpt8/model.onnx, gpt8/batch/ (ids, labels; a few labels ignored),
gpt8/initial/ (the parameters before training) and gpt8/adamw/ (three
steps of PyTorch autograd + AdamW on that batch, as dtc-run --dump writes
them: loss.npy, grad/, param/). The outputs are committed; the matching
dtc-compile flags are in test/Integration/train-pipeline*.
"""
import importlib.util
import os

import numpy as np
import torch
from torch import nn

VOCAB, DIM, HEADS, SEQ, BATCH, LAYERS = 32, 16, 2, 8, 32, 8


def example_blocks():
    """The example model's module (examples/tiny_transformer/make_model.py),
    its sizes set to this model's: its Block reads them when built."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "../../../../examples/tiny_transformer/make_model.py")
    spec = importlib.util.spec_from_file_location("tiny_transformer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.VOCAB, module.DIM, module.HEADS, module.SEQ = VOCAB, DIM, HEADS, SEQ
    return module


class DeepLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(SEQ, DIM)
        example = example_blocks()
        self.blocks = nn.ModuleList([example.Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        h = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln_f(h))


def build_model():
    """GPT-2's initialisation (normal, std 0.02), norms perturbed so that the
    exporter keeps them apart."""
    torch.manual_seed(0)
    model = DeepLM()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "ln" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn_like(p))
            elif p.dim() > 1:
                p.normal_(0.0, 0.02)
            else:
                p.normal_(0.0, 0.01)
    return model


def save_dir(path, tensors):
    os.makedirs(path, exist_ok=True)
    for name, tensor in tensors.items():
        np.save(os.path.join(path, name + ".npy"), tensor.detach().numpy())


def main():
    out = "gpt8"
    torch.manual_seed(3)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    labels[5, 2] = -100
    save_dir(f"{out}/batch", {"ids": ids, "labels": labels})
    model = build_model()
    save_dir(f"{out}/initial", dict(model.named_parameters()))
    torch.onnx.export(model, (ids,), f"{out}/model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=0.01)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        logits = model(ids).reshape(-1, VOCAB)
        loss = nn.functional.cross_entropy(logits, labels.reshape(-1), ignore_index=-100)
        loss.backward()
        losses.append(loss.item())
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    os.makedirs(f"{out}/adamw", exist_ok=True)
    np.save(f"{out}/adamw/loss.npy", np.array(losses, np.float32))
    save_dir(f"{out}/adamw/grad", grads)
    save_dir(f"{out}/adamw/param", dict(model.named_parameters()))


if __name__ == "__main__":
    main()

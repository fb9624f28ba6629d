"""Writes the pipeline-parallelism fixtures, each exported at a batch of 32
(deep enough for pp=4 with two virtual stages per rank, wide enough in its
batch for 16 microbatches; the example models have one or two blocks and a
batch of 2-4):
  gpt8/   a GPT-2-style language model of 8 blocks (the example model's,
          narrower);
  llama8/ the Llama-style example model (RMSNorm, rotary embeddings,
          grouped-query attention, SwiGLU, a head tied to the embedding)
          with 8 layers (train with --freeze '^rope_');
  gpt3/   the GPT of 3 blocks, for a 3-stage split (a batch of 24, which
          3 and 6 microbatches divide).

Run with Debian's Python (python3-torch 1.13, python3-onnx) from this
directory:  /usr/bin/python3 make_models.py
Writes DIR/model.onnx, DIR/batch/ (ids, labels; a few labels ignored),
DIR/initial/ (the parameters before training) and DIR/adamw/ (three steps
of PyTorch autograd + AdamW on that batch, as dtc-run --dump writes them:
loss.npy, grad/, param/). The outputs are committed; the matching
dtc-compile flags are in test/Integration/pipeline_matrix.py.
"""
import importlib.util
import os
import sys

import numpy as np
import torch
from torch import nn

VOCAB, DIM, HEADS, SEQ, BATCH, LAYERS = 32, 16, 2, 8, 32, 8


def example(name):
    """An example model's module (examples/NAME/make_model.py), whose
    classes read its sizes when built."""
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../examples")
    sys.path.insert(0, examples)  # (its export helper)
    spec = importlib.util.spec_from_file_location(name, os.path.join(examples, name,
                                                                     "make_model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_blocks():
    """The GPT example's module, its sizes set to this model's."""
    module = example("tiny_transformer")
    module.VOCAB, module.DIM, module.HEADS, module.SEQ = VOCAB, DIM, HEADS, SEQ
    return module


class DeepLM(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.wpe = nn.Embedding(SEQ, DIM)
        example = example_blocks()
        self.blocks = nn.ModuleList([example.Block() for _ in range(layers)])
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        h = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln_f(h))


def build_model(layers=LAYERS):
    """GPT-2's initialisation (normal, std 0.02), norms perturbed so that the
    exporter keeps them apart."""
    torch.manual_seed(0)
    model = DeepLM(layers)
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


def write_fixture(out, model, vocab, seq, batch=None):
    """The batch (of BATCH sequences by default, read when called: a bench
    sets the sizes), the initial parameters, the export and PyTorch's three
    AdamW steps of `model` into OUT/."""
    torch.manual_seed(3)
    ids = torch.randint(0, vocab, (batch or BATCH, seq))
    labels = torch.roll(ids, -1, dims=1)
    labels[:, -1] = -100
    labels[5, 2] = -100
    save_dir(f"{out}/batch", {"ids": ids, "labels": labels})
    save_dir(f"{out}/initial", dict(model.named_parameters()))
    torch.onnx.export(model, (ids,), f"{out}/model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17, do_constant_folding=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=0.01)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        logits = model(ids).reshape(-1, vocab)
        loss = nn.functional.cross_entropy(logits, labels.reshape(-1), ignore_index=-100)
        loss.backward()
        losses.append(loss.item())
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        optimizer.step()
    os.makedirs(f"{out}/adamw", exist_ok=True)
    np.save(f"{out}/adamw/loss.npy", np.array(losses, np.float32))
    save_dir(f"{out}/adamw/grad", grads)
    save_dir(f"{out}/adamw/param", dict(model.named_parameters()))


def llama(layers):
    """The Llama-style example with `layers` layers, its own initialisation."""
    module = example("tiny_llama")
    module.LAYERS, module.BATCH = layers, BATCH
    return module.build_model().train(), module.VOCAB, module.SEQ


def main():
    write_fixture("gpt8", build_model(), VOCAB, SEQ)
    write_fixture("gpt3", build_model(layers=3), VOCAB, SEQ, batch=24)
    model, vocab, seq = llama(8)
    write_fixture("llama8", model, vocab, seq)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes PyTorch's training trajectories for the example model.

Run with Debian's Python (python3-torch 1.13) from this directory:
  /usr/bin/python3 make_training_reference.py
For each configuration, three steps of PyTorch autograd + torch.optim on one
fixed batch (some labels ignored) are recorded as the dumps dtc-run writes:
<config>/loss.npy (each step's loss), <config>/grad/<param>.npy (last
step's gradients) and <config>/param/<param>.npy (parameters after the last
step), plus the shared batch in batch/ and the parameters before training
in initial/. The outputs are committed.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../examples/tiny_transformer"))
from make_model import BATCH, SEQ, VOCAB, build_model  # noqa: E402

CONFIGS = {
    # The matching dtc-compile flags are in test/Integration/train-*.mlir.
    "adamw": lambda params: torch.optim.AdamW(params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8,
                                              weight_decay=0.01),
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01),
}
STEPS = 3


def main():
    torch.manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    labels = torch.roll(ids, -1, dims=1)
    labels[0, -1] = -100  # ignored tokens
    labels[1, 2] = -100
    os.makedirs("batch", exist_ok=True)
    np.save("batch/ids.npy", ids.numpy())
    np.save("batch/labels.npy", labels.numpy())

    os.makedirs("initial", exist_ok=True)
    for n, p in build_model().named_parameters():
        np.save(f"initial/{n}.npy", p.detach().numpy())

    for name, make_optimizer in CONFIGS.items():
        model = build_model().train()
        optimizer = make_optimizer(model.parameters())
        losses = []
        for _ in range(STEPS):
            optimizer.zero_grad()
            logits = model(ids)
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)
            loss.backward()
            losses.append(loss.item())
            grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
            optimizer.step()
        os.makedirs(f"{name}/grad", exist_ok=True)
        os.makedirs(f"{name}/param", exist_ok=True)
        np.save(f"{name}/loss.npy", np.array(losses, np.float32))
        for n, p in model.named_parameters():
            np.save(f"{name}/grad/{n}.npy", grads[n].numpy())
            np.save(f"{name}/param/{n}.npy", p.detach().numpy())


if __name__ == "__main__":
    main()

"""Shared by the example generators: export a language model and its data.

export(model, vocab, seq, batch) writes, in the current directory,
model.onnx (opset 17, do_constant_folding=False so that tied weights stay
tied), data/ids.npy (a random batch), data/expected/logits.npy (the model's
output for it) and task/ (a synthetic training batch: each label is the next
token of a sequence counting up by one modulo the vocabulary).
"""
import os

import numpy as np
import torch


def export(model, vocab, seq, batch):
    ids = torch.randint(0, vocab, (batch, seq))
    with torch.no_grad():
        logits = model(ids)
    torch.onnx.export(model, (ids,), "model.onnx", input_names=["ids"],
                      output_names=["logits"], opset_version=17,
                      do_constant_folding=False)
    os.makedirs("data/expected", exist_ok=True)
    np.save("data/ids.npy", ids.numpy())
    np.save("data/expected/logits.npy", logits.numpy())
    os.makedirs("task", exist_ok=True)
    starts = torch.randint(0, vocab, (batch, 1))
    task_ids = (starts + torch.arange(seq)) % vocab
    np.save("task/ids.npy", task_ids.numpy())
    np.save("task/labels.npy", ((task_ids + 1) % vocab).numpy())

"""A one-layer GPT whose attention has what the fused CUDA kernels apply
besides a float mask and grouped heads (make_model.py's Llama): a boolean
causal mask (torch.where) and dropout on the probabilities; head dimension
32, 72 tokens. Writes gpt/model.onnx,
gpt/task/ and gpt/initial/. Run with Debian's python3 (torch 1.13).
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

VOCAB, DIM, HEADS, SEQ, BATCH = 64, 64, 2, 72, 2


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.drop = nn.Dropout(0.1)
        self.register_buffer("causal", torch.ones(SEQ, SEQ, dtype=torch.bool).tril())

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).split(DIM, dim=-1)
        heads = lambda z: z.view(b, t, HEADS, d // HEADS).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        s = q @ k.transpose(-2, -1) / (d // HEADS) ** 0.5
        s = torch.where(self.causal, s, torch.tensor(float("-inf")))
        att = self.drop(torch.softmax(s, dim=-1))
        return x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.block = Block()
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, ids):
        return self.head(self.block(self.embed(ids)))


here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpt")
os.makedirs(os.path.join(here, "task"), exist_ok=True)
os.makedirs(os.path.join(here, "initial"), exist_ok=True)
torch.manual_seed(0)
model = GPT().train()  # (the Dropout node is exported in training mode)
ids = torch.randint(0, VOCAB, (BATCH, SEQ))
torch.onnx.export(model, (ids,), os.path.join(here, "model.onnx"),
                  input_names=["ids"], output_names=["logits"], opset_version=17,
                  do_constant_folding=False,
                  training=torch.onnx.TrainingMode.TRAINING)
np.save(os.path.join(here, "task", "ids.npy"), ids.numpy())
np.save(os.path.join(here, "task", "labels.npy"), ((ids + 1) % VOCAB).numpy())
for tensor in onnx.load(os.path.join(here, "model.onnx")).graph.initializer:
    np.save(os.path.join(here, "initial", tensor.name + ".npy"),
            numpy_helper.to_array(tensor))

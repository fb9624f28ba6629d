#!/usr/bin/env python3
"""check_dropout_grad.py MODEL.onnx BATCH_DIR DUMP_DIR SEED

For test/Import/ONNX/Inputs/dropout_classifier.onnx (logits =
dropout(x @ w)), recomputes with numpy the first training step's gradient
of the mean cross-entropy with respect to w, drawing the dropout mask with
an independent Philox4x32-10 (keyed on (seed, stream 0), counter
(element index, step 0)), and compares it with DUMP_DIR/grad/w.npy.
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK32 = 0xFFFFFFFF


def philox(counter, key):
    c = [int(x) for x in counter]
    k = [int(x) for x in key]
    for _ in range(10):
        p0, p1 = M0 * c[0], M1 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & MASK32, p1 & MASK32,
             ((p0 >> 32) ^ c[3] ^ k[1]) & MASK32, p0 & MASK32]
        k = [(k[0] + W0) & MASK32, (k[1] + W1) & MASK32]
    return c


model, batch, dump, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
graph = onnx.load(model).graph
w = {t.name: numpy_helper.to_array(t) for t in graph.initializer}["w"].astype(np.float64)
ratio = 0.25
x = np.load(f"{batch}/x.npy").astype(np.float64)
labels = np.load(f"{batch}/labels.npy")
h = x @ w
keep = np.array([philox([i, 0, 0, 0], [seed, 0])[0] / 2.0**32 >= ratio for i in range(h.size)])
scale = keep.reshape(h.shape) / (1 - ratio)
logits = h * scale
p = np.exp(logits - logits.max(axis=1, keepdims=True))
p /= p.sum(axis=1, keepdims=True)
dlogits = p.copy()
dlogits[np.arange(len(labels)), labels] -= 1
dlogits /= len(labels)
expected = x.T @ (dlogits * scale)
actual = np.load(f"{dump}/grad/w.npy").astype(np.float64)
err = np.linalg.norm(actual - expected) / np.linalg.norm(expected)
print(f"dropped {int((~keep).sum())} of {keep.size}; grad rel L2 {err:.2e}")
sys.exit(0 if err <= 1e-5 and 0 < (~keep).sum() < keep.size else 1)

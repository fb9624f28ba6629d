#!/usr/bin/env python3
"""Writes ONNX node tests, in the layout of ONNX's own test data, for what
Debian's libonnx-testdata (ONNX 1.12) does not test: Einsum patterns beyond
its five, and the opset-18+ forms (Gelu at 20, RMSNormalization at 23,
ReduceMean axes as an input and Split num_outputs at 18).

Run with Debian's Python (python3-onnx, python3-numpy) from this directory:
  /usr/bin/python3 make_node_tests.py
Expected outputs are computed here with numpy (independently of dtc). The
outputs are committed; test/Import/ONNX/own-node-tests.mlir runs them with
the conformance runner.
"""
import math
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
OUT = "node"


def write(name, node, inputs, outputs, opset):
    """inputs/outputs: lists of (name, array)."""
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    info = lambda n, a: helper.make_tensor_value_info(
        n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
    graph = helper.make_graph([node], name, [info(n, a) for n, a in inputs],
                              [info(n, a) for n, a in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(tensors):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


shutil.rmtree(OUT, ignore_errors=True)

EINSUM = {
    "attention_scores": ("bhqd,bhkd->bhqk", [r(2, 3, 4, 5), r(2, 3, 6, 5)]),
    "batch_broadcast": ("...ij,...jk->...ik", [r(2, 1, 3, 4), r(5, 4, 2)]),
    "three_operands": ("ij,jk,kl->il", [r(2, 3), r(3, 4), r(4, 5)]),
    "trace": ("ii", [r(4, 4)]),
    "total": ("ij->", [r(3, 4)]),
    "permute": ("ijk->kji", [r(2, 3, 4)]),
    "outer": ("i,j->ij", [r(3), r(4)]),
    "moe_dispatch": ("sec,sm->ecm", [r(6, 2, 3), r(6, 4)]),
}
for name, (equation, arrays) in EINSUM.items():
    names = [f"x{i}" for i in range(len(arrays))]
    expected = np.einsum(equation, *[a.astype(np.float64) for a in arrays]).astype(np.float32)
    write(f"test_dtc_einsum_{name}",
          helper.make_node("Einsum", names, ["y"], equation=equation),
          list(zip(names, arrays)), [("y", np.asarray(expected, np.float32))], 12)

x = r(3, 7)
erf = np.vectorize(math.erf)
write("test_dtc_gelu_opset20", helper.make_node("Gelu", ["x"], ["y"]), [("x", x)],
      [("y", (0.5 * x * (1 + erf(x / math.sqrt(2)))).astype(np.float32))], 20)
tanh_gelu = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
write("test_dtc_gelu_tanh_opset20", helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"),
      [("x", x)], [("y", tanh_gelu.astype(np.float32))], 20)

x, scale = r(2, 3, 4), r(4)
rms = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-5) * scale
write("test_dtc_rms_normalization_opset23",
      helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=-1),
      [("x", x), ("scale", scale)], [("y", rms.astype(np.float32))], 23)

x, axes = r(2, 3, 4), np.array([0, 2], np.int64)
write("test_dtc_reduce_mean_axes_input_opset18",
      helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0),
      [("x", x), ("axes", axes)], [("y", x.mean(axis=(0, 2)).astype(np.float32))], 18)

x = r(2, 7)
write("test_dtc_split_num_outputs_opset18",
      helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3),
      [("x", x)], [("a", x[:, 0:3]), ("b", x[:, 3:6]), ("c", x[:, 6:7])], 18)

# Attention (opset 23) with a float mask that is -inf throughout one row:
# ONNX gives that row zeros (not NaN); the others are softmax(q k^T / 2 +
# mask) v.
q, k, v = r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 4)
mask = r(3, 5)
mask[1, :] = -np.inf
mask[2, 3:] = -np.inf
scores = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2) / 2 + mask
with np.errstate(invalid="ignore"):
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
p[:, :, 1, :] = 0
write("test_dtc_attention_float_mask_fully_masked_row_opset23",
      helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"]),
      [("q", q), ("k", k), ("v", v), ("mask", mask)],
      [("y", (p @ v).astype(np.float32))], 23)

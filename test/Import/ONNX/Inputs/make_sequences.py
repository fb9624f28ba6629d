#!/usr/bin/env python3
"""Writes OUT/model.onnx, OUT/inputs/x.npy and OUT/expected/*.npy: the
sequence ops as exporters write them (torch's split of a fused QKV is
SplitToSequence then SequenceAt), with numpy's results as the reference.

usage: make_sequences.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
for sub in ("inputs", "expected"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)
x = np.arange(2 * 3 * 12, dtype=np.float32).reshape(2, 3, 12) / 7
np.save(os.path.join(out, "inputs", "x.npy"), x)

consts = {"split": np.array([4, 2, 6], np.int64), "p0": np.array(0, np.int64),
          "p1": np.array(1, np.int64), "pm1": np.array(-1, np.int64),
          "chunk": np.array(5, np.int64)}
nodes = [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(v, k))
         for k, v in consts.items()]
nodes += [
    # q, k, v of a fused projection, by sizes along the last axis.
    helper.make_node("SplitToSequence", ["x", "split"], ["qkv"], axis=-1),
    helper.make_node("SequenceAt", ["qkv", "p0"], ["q"]),
    helper.make_node("SequenceAt", ["qkv", "p1"], ["k"]),
    helper.make_node("SequenceAt", ["qkv", "pm1"], ["v"]),
    helper.make_node("SequenceLength", ["qkv"], ["n"]),
    # Chunks of 5 (the last of 2), put back together.
    helper.make_node("SplitToSequence", ["x", "chunk"], ["chunks"], axis=2),
    helper.make_node("ConcatFromSequence", ["chunks"], ["joined"], axis=2),
    # Unit parts without the split axis, stacked along a new last axis.
    helper.make_node("SplitToSequence", ["x"], ["rows"], axis=1, keepdims=0),
    helper.make_node("ConcatFromSequence", ["rows"], ["stacked"], axis=-1, new_axis=1),
    # Construct, insert at the front, erase the last.
    helper.make_node("SequenceConstruct", ["q", "q"], ["pair"]),
    helper.make_node("SequenceInsert", ["pair", "q", "p0"], ["three"]),
    helper.make_node("SequenceErase", ["three"], ["two"]),
    helper.make_node("ConcatFromSequence", ["two"], ["qq"], axis=0),
]
expected = {
    "q": x[..., :4], "k": x[..., 4:6], "v": x[..., 6:], "n": np.array(3, np.int64),
    "joined": x, "stacked": np.stack([x[:, i] for i in range(3)], axis=-1),
    "qq": np.concatenate([x[..., :4], x[..., :4]], axis=0),
}
for name, value in expected.items():
    np.save(os.path.join(out, "expected", f"{name}.npy"), value)
outputs = [helper.make_tensor_value_info(
    name, TensorProto.INT64 if value.dtype == np.int64 else TensorProto.FLOAT, list(value.shape))
    for name, value in expected.items()]
graph = helper.make_graph(nodes, "sequences",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          outputs)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
          os.path.join(out, "model.onnx"))

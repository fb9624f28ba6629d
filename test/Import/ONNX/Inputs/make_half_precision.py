#!/usr/bin/env python3
"""Writes OUT/model.onnx and OUT/inputs/x.pb: bf16 and fp16 tensors in every
form an exporter stores them: initializers and Constant values in raw_data
and in int32_data (one 16-bit pattern per int32), and a .pb input.

usage: make_half_precision.py OUT
The model computes z = ((x * k1 * k2) @ w_raw @ w_i32 -> fp16) @ h_raw @ h_i32
with x = [1, 1] (bf16), k1 = [2, 3], k2 = [0.5, 0.25] and every w and h
[[1, 2], [0.5, -1]]: by hand, x * k1 * k2 = [1, 0.75], then @ w: [1.375, 1.25],
[2, 1.5], and @ h: [2.75, 2.5], [4, 3].
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def bf16_bits(values):
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def f16_bits(values):
    return np.asarray(values, np.float16).view(np.uint16)


def tensor(name, dtype, dims, bits, raw):
    proto = TensorProto(name=name, data_type=dtype, dims=dims)
    if raw:
        proto.raw_data = bits.tobytes()
    else:
        proto.int32_data.extend(int(b) for b in bits.ravel())
    return proto


out = sys.argv[1]
os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
w = [[1.0, 2.0], [0.5, -1.0]]
BF16, F16 = TensorProto.BFLOAT16, TensorProto.FLOAT16
nodes = [
    helper.make_node("Constant", [], ["k1"], value=tensor("k1", BF16, [2], bf16_bits([2, 3]), True)),
    helper.make_node("Constant", [], ["k2"],
                     value=tensor("k2", BF16, [2], bf16_bits([0.5, 0.25]), False)),
    helper.make_node("Mul", ["x", "k1"], ["a"]),
    helper.make_node("Mul", ["a", "k2"], ["scaled"]),
    helper.make_node("MatMul", ["scaled", "w_raw"], ["b"]),
    helper.make_node("MatMul", ["b", "w_i32"], ["c"]),
    helper.make_node("Cast", ["c"], ["ch"], to=F16),
    helper.make_node("MatMul", ["ch", "h_raw"], ["d"]),
    helper.make_node("MatMul", ["d", "h_i32"], ["z"]),
]
initializers = [tensor("w_raw", BF16, [2, 2], bf16_bits(w), True),
                tensor("w_i32", BF16, [2, 2], bf16_bits(w), False),
                tensor("h_raw", F16, [2, 2], f16_bits(w), True),
                tensor("h_i32", F16, [2, 2], f16_bits(w), False)]
graph = helper.make_graph(nodes, "half_precision",
                          [helper.make_tensor_value_info("x", BF16, [1, 2])],
                          [helper.make_tensor_value_info("scaled", BF16, [1, 2]),
                           helper.make_tensor_value_info("c", BF16, [1, 2]),
                           helper.make_tensor_value_info("z", F16, [1, 2])],
                          initializer=initializers)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "model.onnx"))
with open(os.path.join(out, "inputs", "x.pb"), "wb") as f:
    f.write(tensor("x", BF16, [1, 2], bf16_bits([1, 1]), True).SerializeToString())

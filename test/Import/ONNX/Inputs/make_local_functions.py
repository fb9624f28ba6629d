#!/usr/bin/env python3
"""Writes OUT/model.onnx, OUT/inputs/x.npy and OUT/expected/y.npy: a model
calling local functions as onnxscript writes them (a custom domain, an
attribute bound by ref_attr_name, a function calling another, two calls of
one function), with numpy's result as the reference.

usage: make_local_functions.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
for sub in ("inputs", "expected"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)
x = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 3
np.save(os.path.join(out, "inputs", "x.npy"), x)

axis = onnx.AttributeProto(name="axis", ref_attr_name="axis", type=onnx.AttributeProto.INT)
# weighted(a) = softmax(a, axis) * a  (axis from the call)
weighted = helper.make_function(
    "local", "Weighted", ["a"], ["b"],
    [helper.make_node("Softmax", ["a"], ["s"]), helper.make_node("Mul", ["s", "a"], ["b"])],
    opset_imports=[helper.make_opsetid("", 18)], attributes=["axis"])
weighted.node[0].attribute.append(axis)
# twice(a) = weighted(weighted(a) + a), calling the first function.
twice = helper.make_function(
    "local", "Twice", ["a"], ["c"],
    [helper.make_node("Weighted", ["a"], ["w"], domain="local", axis=0),
     helper.make_node("Add", ["w", "a"], ["t"]),
     helper.make_node("Weighted", ["t"], ["c"], domain="local", axis=1)],
    opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
graph = helper.make_graph(
    [helper.make_node("Twice", ["x"], ["h"], domain="local"),
     helper.make_node("Twice", ["h"], ["y"], domain="local")],
    "local_functions", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
model = helper.make_model(graph, functions=[weighted, twice],
                          opset_imports=[helper.make_opsetid("", 18),
                                         helper.make_opsetid("local", 1)])
onnx.save(model, os.path.join(out, "model.onnx"))


def softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def twice_np(a):
    w = softmax(a, 0) * a
    t = w + a
    return softmax(t, 1) * t


np.save(os.path.join(out, "expected", "y.npy"), twice_np(twice_np(x)))

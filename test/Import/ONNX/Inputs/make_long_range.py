#!/usr/bin/env python3
"""Writes OUT/model.onnx: Range nodes longer than the compiler folds
(kMaxFoldedElements = 4096), int64 and float, and OUT/expected/*.npy, the
same ranges from numpy.arange, for compare_npy.py.

usage: make_long_range.py OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(os.path.join(out, "expected"), exist_ok=True)
ranges = {"ints": (np.int64(3), np.int64(3 + 2 * 5000), np.int64(2)),
          "floats": (np.float32(-1.5), np.float32(2500.0), np.float32(0.5))}
nodes, outputs, inits = [], [], []
for name, (start, limit, delta) in ranges.items():
    for part, value in (("start", start), ("limit", limit), ("delta", delta)):
        inits.append(numpy_helper.from_array(np.array(value), f"{name}_{part}"))
    nodes.append(helper.make_node("Range", [f"{name}_start", f"{name}_limit", f"{name}_delta"],
                                  [name]))
    expected = np.arange(start, limit, delta, dtype=np.asarray(start).dtype)
    np.save(os.path.join(out, "expected", f"{name}.npy"), expected)
    elem = TensorProto.INT64 if name == "ints" else TensorProto.FLOAT
    outputs.append(helper.make_tensor_value_info(name, elem, [len(expected)]))
graph = helper.make_graph(nodes, "long_range", [], outputs, initializer=inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "model.onnx"))

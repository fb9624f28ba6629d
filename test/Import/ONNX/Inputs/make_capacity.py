#!/usr/bin/env python3
"""Writes capacity_reshape.onnx: a Switch-style router (TopK k=1 over 4
experts, OneHot, CumSum places along 16 tokens, a slot OneHot of depth 6,
the capacity) whose slots a Reshape then reads with a shape holding the
capacity, which dtc-compile --capacity-factor cannot rewrite.

usage: /usr/bin/python3 make_capacity.py   (from this directory)
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TOKENS, EXPERTS, CAPACITY = 16, 4, 6
consts = {"k": [1], "axes": [1], "experts": EXPERTS, "zero": 0, "onoff": [0.0, 1.0],
          "capacity": CAPACITY, "shape": [TOKENS, CAPACITY]}
inits = [numpy_helper.from_array(np.array(v, dtype=np.float32 if name == "onoff" else np.int64),
                                 name) for name, v in consts.items()]
nodes = [
    helper.make_node("TopK", ["scores", "k"], ["gate", "choice"], name="TopK"),
    helper.make_node("Squeeze", ["choice", "axes"], ["expert"], name="Squeeze"),
    helper.make_node("OneHot", ["expert", "experts", "onoff"], ["mask"], name="OneHot"),
    helper.make_node("CumSum", ["mask", "zero"], ["places"], name="CumSum"),
    helper.make_node("Mul", ["places", "mask"], ["chosen"], name="Mul"),
    helper.make_node("ReduceSum", ["chosen", "axes"], ["place"], keepdims=0, name="ReduceSum"),
    helper.make_node("Cast", ["place"], ["slot_index"], to=TensorProto.INT64, name="Cast"),
    helper.make_node("OneHot", ["slot_index", "capacity", "onoff"], ["slot"], name="SlotOneHot"),
    helper.make_node("Reshape", ["slot", "shape"], ["slots"], name="CapacityReshape"),
]
graph = helper.make_graph(
    nodes, "capacity_reshape",
    [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [TOKENS, EXPERTS])],
    [helper.make_tensor_value_info("slots", TensorProto.FLOAT, [TOKENS, CAPACITY])],
    initializer=inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          "capacity_reshape.onnx")

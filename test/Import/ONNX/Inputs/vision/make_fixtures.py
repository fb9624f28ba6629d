#!/usr/bin/env python3
"""Writes the small vision models the importer lit tests read (vision.mlir).

Run with Debian's Python (python3-onnx, python3-numpy) from anywhere:
  /usr/bin/python3 make_fixtures.py
The outputs are committed; CI does not run this.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

os.chdir(os.path.dirname(os.path.abspath(__file__)))
rng = np.random.default_rng(0)


def save(name, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.producer_name = "dtc-test"
    onnx.save(model, name + ".onnx")


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


# The forms: a 3x3 convolution (window slices, concat, GEMM), a patch
# convolution (reshape and transpose, GEMM), a training-mode batch norm
# (its running statistics are buffers), a max pool.
save("forms",
     [helper.make_node("Conv", ["x", "c.weight", "c.bias"], ["c"], name="/conv/Conv",
                       kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
      helper.make_node("Conv", ["x", "p.weight"], ["p"], name="/patch/Conv",
                       kernel_shape=[2, 2], strides=[2, 2]),
      helper.make_node("BatchNormalization", ["c", "bn.weight", "bn.bias", "bn.running_mean",
                                              "bn.running_var"],
                       ["b", "bn_mean", "bn_var"], name="/bn/BatchNormalization",
                       training_mode=1, momentum=0.9),
      helper.make_node("MaxPool", ["b"], ["y"], name="/pool/MaxPool", kernel_shape=[2, 2],
                       strides=[2, 2])],
     [f32("x", [2, 3, 4, 4])], [f32("y", [2, 4, 2, 2]), f32("p", [2, 5, 2, 2])],
     [init("c.weight", (4, 3, 3, 3)), init("c.bias", (4,)), init("p.weight", (5, 3, 2, 2)),
      init("bn.weight", (4,)), init("bn.bias", (4,)),
      numpy_helper.from_array(np.zeros(4, np.float32), "bn.running_mean"),
      numpy_helper.from_array(np.ones(4, np.float32), "bn.running_var")])

# Malformed vision nodes: each must be one diagnostic naming the node.
save("conv_groups",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="/conv/Conv", group=2)],
     [f32("x", [1, 4, 5, 5]), f32("w", [6, 3, 3, 3])], [f32("y", [1, 6, 3, 3])])
save("conv_window",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="/conv/Conv")],
     [f32("x", [1, 1, 2, 2]), f32("w", [1, 1, 3, 3])], [f32("y", [1, 1, 1, 1])])
save("conv_auto_pad",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="/conv/Conv", auto_pad="FOO")],
     [f32("x", [1, 1, 4, 4]), f32("w", [1, 1, 3, 3])], [f32("y", [1, 1, 2, 2])])
save("pool_kernel",
     [helper.make_node("MaxPool", ["x"], ["y"], name="/pool/MaxPool", kernel_shape=[2])],
     [f32("x", [1, 1, 4, 4])], [f32("y", [1, 1, 2, 2])])
save("norm_rank",
     [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                       name="/bn/BatchNormalization")],
     [f32("x", [4]), f32("s", [4]), f32("b", [4]), f32("m", [4]), f32("v", [4])],
     [f32("y", [4])])
save("conv_transpose_auto_pad",
     [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="/up/ConvTranspose",
                       auto_pad="FOO")],
     [f32("x", [1, 1, 4, 4]), f32("w", [1, 1, 3, 3])], [f32("y", [1, 1, 6, 6])])

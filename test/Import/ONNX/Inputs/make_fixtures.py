#!/usr/bin/env python3
"""Writes the small ONNX models the importer lit tests read.

Run with Debian's Python (python3-onnx, python3-numpy) from this directory:
  /usr/bin/python3 make_fixtures.py
The outputs are committed; CI does not run this.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def save(name, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, name + ".onnx")
    return model


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def init(name, array):
    return numpy_helper.from_array(array, name)


# A two-layer MLP with a reshape and a softmax: the happy path.
mlp = save(
    "mlp",
    [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], name="/fc1/Gemm", transB=1),
        helper.make_node("Relu", ["h"], ["a"], name="/act/Relu"),
        helper.make_node("MatMul", ["a", "fc2.weight"], ["z"], name="/fc2/MatMul"),
        helper.make_node("Reshape", ["z", "shape"], ["r"], name="/Reshape"),
        helper.make_node("Softmax", ["r"], ["probs"], name="/Softmax", axis=-1),
    ],
    [f32("x", [2, 4])],
    [f32("probs", [2, 3, 2])],
    [
        init("fc1.weight", rng.standard_normal((8, 4), dtype=np.float32)),
        init("fc1.bias", rng.standard_normal(8, dtype=np.float32)),
        init("fc2.weight", rng.standard_normal((8, 6), dtype=np.float32)),
        init("shape", np.array([2, 3, 2], dtype=np.int64)),
    ],
)

# Malformed files.
data = mlp.SerializeToString()
with open("truncated.onnx", "wb") as f:
    f.write(data[: len(data) // 2])
with open("garbage.onnx", "wb") as f:
    f.write(bytes(rng.integers(0, 256, 200, dtype=np.uint8)))

# Well-formed protobufs that dtc must reject with a diagnostic.
save("unsupported_op",
     [helper.make_node("LpPool", ["x"], ["y"], name="/pool/LpPool", kernel_shape=[3, 3])],
     [f32("x", [1, 1, 4, 4])], [f32("y", [1, 1, 2, 2])])
save("unsorted",
     [helper.make_node("Relu", ["t"], ["y"], name="/second"),
      helper.make_node("Neg", ["x"], ["t"], name="/first")],
     [f32("x", [3])], [f32("y", [3])])
save("cycle",
     [helper.make_node("Add", ["x", "b"], ["a"], name="/a"),
      helper.make_node("Relu", ["a"], ["b"], name="/b")],
     [f32("x", [3])], [f32("b", [3])])
save("symbolic_dim",
     [helper.make_node("Relu", ["x"], ["y"], name="/relu")],
     [f32("x", ["batch", 4])], [f32("y", ["batch", 4])])
save("new_opset",
     [helper.make_node("Relu", ["x"], ["y"], name="/relu")],
     [f32("x", [3])], [f32("y", [3])], opset=99)
save("dynamic_reshape",
     [helper.make_node("Reshape", ["x", "shape"], ["y"], name="/reshape")],
     [f32("x", [2, 3]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
     [f32("y", [3, 2])])
save("bad_broadcast",
     [helper.make_node("Add", ["x", "y"], ["z"], name="/add")],
     [f32("x", [2, 3]), f32("y", [4])], [f32("z", [2, 3])])
save("missing_operand",
     [helper.make_node("Add", ["x"], ["z"], name="/add")],
     [f32("x", [3])], [f32("z", [3])])
save("foreign_domain",
     [helper.make_node("FusedGemm", ["x"], ["y"], name="/fused", domain="com.microsoft")],
     [f32("x", [3])], [f32("y", [3])])
save("bad_axis",
     [helper.make_node("Softmax", ["x"], ["y"], name="/softmax", axis=5)],
     [f32("x", [2, 3])], [f32("y", [2, 3])])
save("wrong_output_shape",
     [helper.make_node("Relu", ["x"], ["y"], name="/relu")],
     [f32("x", [3])], [f32("y", [4])])

# Data for running mlp.onnx: its input, and the expected output computed
# here with numpy (the independent reference the lit test compares with).
import os

os.makedirs("mlp_data/expected", exist_ok=True)
x = rng.standard_normal((2, 4), dtype=np.float32)
np.save("mlp_data/x.npy", x)
weights = {t.name: numpy_helper.to_array(t) for t in mlp.graph.initializer}
h = np.maximum(x.astype(np.float64) @ weights["fc1.weight"].T + weights["fc1.bias"], 0)
z = (h @ weights["fc2.weight"]).reshape(2, 3, 2)
e = np.exp(z - z.max(axis=-1, keepdims=True))
np.save("mlp_data/expected/probs.npy", (e / e.sum(axis=-1, keepdims=True)).astype(np.float32))

# A bound shape operand for dynamic_reshape.onnx.
os.makedirs("bind_shape", exist_ok=True)
np.save("bind_shape/shape.npy", np.array([3, 2], dtype=np.int64))

# Shapes that ask for absurd amounts of memory.
save("huge_constant",
     [helper.make_node("Constant", [], ["s"], name="/shape", value=numpy_helper.from_array(
         np.array([1 << 20, 1 << 20], np.int64))),
      helper.make_node("ConstantOfShape", ["s"], ["y"], name="/fill")],
     [], [f32("y", [1 << 20, 1 << 20])])
save("huge_expand",
     [helper.make_node("Constant", [], ["s"], name="/shape", value=numpy_helper.from_array(
         np.array([1 << 40, 1 << 40, 4], np.int64))),
      helper.make_node("Expand", ["x", "s"], ["y"], name="/expand")],
     [f32("x", [4])], [f32("y", [1 << 40, 1 << 40, 4])])

# A -inf causal mask initializer is a constant, not a parameter.
mask = np.triu(np.full((3, 3), -np.inf, np.float32), 1)
save("masked",
     [helper.make_node("Add", ["x", "mask"], ["y"], name="/mask/Add")],
     [f32("x", [3, 3])], [f32("y", [3, 3])],
     [init("mask", mask)])

# Legacy forms: Cast with a string target type (opsets 1-5), Concat without
# an axis (default 1 before opset 4).
save("cast_opset1",
     [helper.make_node("Cast", ["x"], ["y"], name="/cast", to="INT32")],
     [f32("x", [3])], [helper.make_tensor_value_info("y", TensorProto.INT32, [3])], opset=1)
save("concat_opset1",
     [helper.make_node("Concat", ["x", "x"], ["y"], name="/concat")],
     [f32("x", [2, 3])], [f32("y", [2, 6])], opset=1)

# A classifier with dropout, for training-mode dropout.
save("dropout_classifier",
     [helper.make_node("MatMul", ["x", "w"], ["h"], name="/fc/MatMul"),
      helper.make_node("Constant", [], ["ratio"], name="/ratio",
                       value=numpy_helper.from_array(np.array(0.25, np.float32))),
      helper.make_node("Dropout", ["h", "ratio"], ["logits"], name="/drop/Dropout")],
     [f32("x", [4, 16])], [f32("logits", [4, 8])],
     [init("w", rng.standard_normal((16, 8), dtype=np.float32))], opset=13)
os.makedirs("dropout_batch", exist_ok=True)
np.save("dropout_batch/x.npy", rng.standard_normal((4, 16), dtype=np.float32))
np.save("dropout_batch/labels.npy", np.array([1, 0, 7, 3], np.int64))

# Opset 23 Attention with a KV cache (past_key/past_value in, present_key/
# present_value out): imports for inference, refused for training.
save("kv_cache_attention",
     [helper.make_node("Attention", ["q", "k", "v", "", "past_key", "past_value"],
                       ["y", "present_key", "present_value"], is_causal=1)],
     [f32("q", [1, 2, 3, 4]), f32("k", [1, 2, 3, 4]), f32("v", [1, 2, 3, 4]),
      f32("past_key", [1, 2, 5, 4]), f32("past_value", [1, 2, 5, 4])],
     [f32("y", [1, 2, 3, 4]), f32("present_key", [1, 2, 8, 4]),
      f32("present_value", [1, 2, 8, 4])], opset=23)

# NonZero's positions have a data-dependent count: the importer's static form
# (every position, the others masked) serves only rows scattered back into
# zeros; a count of them, or a reduction over the rows, is an error naming
# the node.
nonzero_inputs = [f32("x", [4, 3])]
nonzero_positions = [
    helper.make_node("Cast", ["x"], ["mask"], name="/Cast", to=TensorProto.BOOL),
    helper.make_node("NonZero", ["mask"], ["nz"], name="/NonZero"),
    helper.make_node("Gather", ["nz", "zero"], ["rows"], name="/GatherRow", axis=0),
    helper.make_node("Gather", ["x", "rows"], ["picked"], name="/Gather", axis=0),
]
save("nonzero_unscattered",
     nonzero_positions + [helper.make_node("ReduceSum", ["picked"], ["y"], name="/ReduceSum",
                                           keepdims=0)],
     nonzero_inputs, [f32("y", [3])], [init("zero", np.array(0, dtype=np.int64))])
save("nonzero_counted",
     nonzero_positions + [
         helper.make_node("ReduceSum", ["picked"], ["count"], name="/ReduceSum", keepdims=0),
         helper.make_node("Unsqueeze", ["rows", "one"], ["index"], name="/Unsqueeze"),
         helper.make_node("Shape", ["picked"], ["shape"], name="/Shape"),
         helper.make_node("Expand", ["index", "shape"], ["indices"], name="/Expand"),
         helper.make_node("Constant", [], ["zeros"], name="/Zeros",
                          value=numpy_helper.from_array(np.zeros((4, 3), dtype=np.float32))),
         helper.make_node("ScatterElements", ["zeros", "indices", "picked"], ["scattered"],
                          name="/ScatterElements", axis=0),
         helper.make_node("Add", ["scattered", "count"], ["y"], name="/Add"),
     ],
     nonzero_inputs, [f32("y", [4, 3])],
     [init("zero", np.array(0, dtype=np.int64)), init("one", np.array([1], dtype=np.int64))])

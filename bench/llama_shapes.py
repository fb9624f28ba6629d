#!/usr/bin/env python3
"""Writes Llama-3-shaped ONNX graphs from published dimensions, with
onnx.helper, never by instantiating a model (70B of fp32 weights is 282 GB).

usage: bench/llama_shapes.py CONFIG OUT.onnx [--layers L] [--seq S] [--batch B]
  CONFIG: tiny, llama3-8b, llama3-70b or llama3-405b

The graph is the one examples/tiny_llama exports (RMSNorm, rotary position
embeddings, grouped-query attention, SwiGLU, a causal mask, an untied head),
written op for op as torch 1.13's exporter writes it. Every weight is
external data in a file that does not exist, so only `dtc-compile
--shapes-only` can compile it. The causal mask and the rotary tables are
constant subgraphs (Range, compare, Where, Cos, Sin) of activation size, as
an exporter writes them when they are computed in forward: exactly what
compile-time constant folding must not materialise.
"""
import argparse
import math

import onnx
from onnx import TensorProto, helper

# Published dimensions: (layers, d_model, heads, kv_heads, ffn, vocab).
CONFIGS = {
    "tiny": (80, 64, 16, 8, 224, 128),
    "llama3-8b": (32, 4096, 32, 8, 14336, 128256),
    "llama3-70b": (80, 8192, 64, 8, 28672, 128256),
    "llama3-405b": (126, 16384, 128, 8, 53248, 128256),
}


class GraphWriter:
    def __init__(self, weights_file):
        self.nodes, self.initializers, self.weights_file = [], [], weights_file
        self.offset, self.counter = 0, 0

    def fresh(self, hint):
        self.counter += 1
        return f"{hint}_{self.counter}"

    def op(self, op_type, inputs, hint=None, **attrs):
        out = self.fresh(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def const(self, values, dtype=TensorProto.INT64, dims=None):
        dims = [len(values)] if dims is None else dims
        name = self.fresh("const")
        self.nodes.append(helper.make_node(
            "Constant", [], [name], value=helper.make_tensor(name, dtype, dims, values)))
        return name

    def weight(self, name, dims):
        """An fp32 parameter stored as external data that does not exist."""
        tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims,
                             data_location=TensorProto.EXTERNAL)
        length = 4 * math.prod(dims)
        for key, value in (("location", self.weights_file), ("offset", str(self.offset)),
                           ("length", str(length))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        self.offset += length
        self.initializers.append(tensor)
        return name

    def model(self, name, batch, seq, vocab, opset, producer):
        """The graph written so far, its last node's output renamed logits:
        ids [batch, seq] in, logits [batch, seq, vocab] out."""
        self.nodes[-1].output[0] = "logits"
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, seq])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, seq, vocab])],
            initializer=self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                 producer_name=producer)


def build(config, seq, batch, layers=None):
    n_layers, dim, heads, kv_heads, ffn, vocab = CONFIGS[config]
    n_layers = layers or n_layers
    hd, group = dim // heads, heads // kv_heads
    g = GraphWriter(f"{config}.weights.absent")

    def rms_norm(x, name):
        ms = g.op("ReduceMean", [g.op("Pow", [x, g.const([2.0], TensorProto.FLOAT, [])])],
                  axes=[-1], keepdims=1)
        eps = g.const([1e-5], TensorProto.FLOAT, [])
        r = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [ms, eps])])])
        return g.op("Mul", [g.op("Mul", [x, r]), g.weight(f"{name}.weight", [dim])])

    def linear(x, name, n_in, n_out):
        return g.op("MatMul", [x, g.weight(f"{name}.weight_t", [n_in, n_out])])

    def heads_of(x, n):  # [b, s, n*hd] -> [b, n, s, hd]
        return g.op("Transpose", [g.op("Reshape", [x, g.const([batch, seq, n, hd])])],
                    perm=[0, 2, 1, 3])

    def rotate(x, cos, sin):
        half = hd // 2
        hi = g.op("Slice", [x, g.const([half]), g.const([hd]), g.const([-1])])
        lo = g.op("Slice", [x, g.const([0]), g.const([half]), g.const([-1])])
        rotated = g.op("Concat", [g.op("Neg", [hi]), lo], axis=-1)
        return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rotated, sin])])

    def repeat_kv(x):  # [b, kv, s, hd] -> [b, heads, s, hd]
        expanded = g.op("Expand", [g.op("Unsqueeze", [x, g.const([2])]),
                                   g.const([batch, kv_heads, group, seq, hd])])
        return g.op("Reshape", [expanded, g.const([batch, heads, seq, hd])])

    # Rotary tables and the causal mask, computed from constants.
    positions = g.op("Range", [g.const([0.0], TensorProto.FLOAT, []),
                               g.const([float(seq)], TensorProto.FLOAT, []),
                               g.const([1.0], TensorProto.FLOAT, [])])
    inv_freq = g.const([10000.0 ** (-2 * i / hd) for i in range(hd // 2)],
                       TensorProto.FLOAT, [1, hd // 2])
    angles = g.op("Mul", [g.op("Unsqueeze", [positions, g.const([1])]), inv_freq])
    angles = g.op("Concat", [angles, angles], axis=-1)
    cos, sin = g.op("Cos", [angles]), g.op("Sin", [angles])
    steps = g.op("Range", [g.const([0], dims=[]), g.const([seq], dims=[]), g.const([1], dims=[])])
    future = g.op("Greater", [g.op("Unsqueeze", [steps, g.const([0])]),
                              g.op("Unsqueeze", [steps, g.const([1])])])
    mask = g.op("Where", [future, g.const([float("-inf")], TensorProto.FLOAT, []),
                          g.const([0.0], TensorProto.FLOAT, [])])

    h = g.op("Gather", [g.weight("embed.weight", [vocab, dim]), "ids"])
    for layer in range(n_layers):
        p = f"layers.{layer}"
        x = rms_norm(h, f"{p}.attn_norm")
        q = rotate(heads_of(linear(x, f"{p}.attn.wq", dim, heads * hd), heads), cos, sin)
        k = rotate(heads_of(linear(x, f"{p}.attn.wk", dim, kv_heads * hd), kv_heads), cos, sin)
        v = heads_of(linear(x, f"{p}.attn.wv", dim, kv_heads * hd), kv_heads)
        k, v = repeat_kv(k), repeat_kv(v)
        scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        scores = g.op("Add", [g.op("Div", [scores, g.const([math.sqrt(hd)], TensorProto.FLOAT,
                                                            [])]), mask])
        att = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        att = g.op("Reshape", [g.op("Transpose", [att], perm=[0, 2, 1, 3]),
                               g.const([batch, seq, dim])])
        h = g.op("Add", [h, linear(att, f"{p}.attn.wo", dim, dim)])
        x = rms_norm(h, f"{p}.mlp_norm")
        gate = linear(x, f"{p}.mlp.w1", dim, ffn)
        up = linear(x, f"{p}.mlp.w3", dim, ffn)
        silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        h = g.op("Add", [h, linear(g.op("Mul", [silu, up]), f"{p}.mlp.w2", ffn, dim)])
    linear(rms_norm(h, "norm"), "lm_head", dim, vocab)
    return g.model(f"{config}_{n_layers}l", batch, seq, vocab, 17, "bench/llama_shapes.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", choices=sorted(CONFIGS))
    parser.add_argument("out")
    parser.add_argument("--layers", type=int)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    onnx.save(build(args.config, args.seq, args.batch, args.layers), args.out)


if __name__ == "__main__":
    main()

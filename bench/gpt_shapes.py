#!/usr/bin/env python3
"""Writes Megatron-GPT-shaped ONNX graphs from published dimensions, with
onnx.helper, never by instantiating a model.

usage: bench/gpt_shapes.py CONFIG OUT.onnx [--layers L] [--seq S] [--batch B]
  CONFIG: tiny, gpt-22b (Korthikanti et al., "Reducing Activation
  Recomputation in Large Transformer Models", table 3: h 6144, a 64,
  48 layers, sequence 2048, vocabulary 51200), opt-175b, bloom-176b or
  mt-nlg-530b (published dimensions, CONFIGS)

The graph is a GPT-2 block as torch's exporter writes it in training mode
at opset 20: LayerNormalization, a fused QKV projection with bias split
into the heads, a causal mask added to the scaled scores, softmax, Dropout
on the probabilities, the output projection, Dropout on each residual
branch, a 4h MLP with Gelu, learned position embeddings with Dropout, a
final norm and an untied head. The Dropout nodes are in training mode (ratio
0.1), so `dtc-compile --dropout` keeps them. Every weight is external data
in a file that does not exist: only `dtc-compile --shapes-only` compiles it.
"""
import argparse
import math
import os
import sys

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_shapes import GraphWriter  # noqa: E402

# (layers, hidden, heads, vocabulary, default sequence)
CONFIGS = {
    "tiny": (4, 64, 4, 128, 16),
    "gpt-22b": (48, 6144, 64, 51200, 2048),
    # Zhang et al., "OPT: Open Pre-trained Transformer Language Models",
    # table 1 (96 layers, 96 heads, d 12288); vocabulary 50272.
    "opt-175b": (96, 12288, 96, 50272, 2048),
    # BigScience, "BLOOM: A 176B-Parameter Open-Access Multilingual
    # Language Model", table 3 (70 layers, 112 heads, d 14336); vocabulary
    # 250880. (ALiBi in place of learned positions: the same shapes but for
    # the position table.)
    "bloom-176b": (70, 14336, 112, 250880, 2048),
    # Smith et al., "Using DeepSpeed and Megatron to Train Megatron-Turing
    # NLG 530B" (105 layers, 128 heads, d 20480); vocabulary 51200.
    "mt-nlg-530b": (105, 20480, 128, 51200, 2048),
}


def build(config, seq, batch, layers=None):
    n_layers, dim, heads, vocab, default_seq = CONFIGS[config]
    n_layers = layers or n_layers
    seq = seq or default_seq
    hd = dim // heads
    g = GraphWriter(f"{config}.weights.absent")
    ratio = g.const([0.1], TensorProto.FLOAT, [])
    training = g.const([1], TensorProto.BOOL, [])

    def dropout(x):
        return g.op("Dropout", [x, ratio, training])

    def layer_norm(x, name):
        return g.op("LayerNormalization", [x, g.weight(f"{name}.weight", [dim]),
                                           g.weight(f"{name}.bias", [dim])],
                    axis=-1, epsilon=1e-5)

    def linear(x, name, n_in, n_out):
        y = g.op("MatMul", [x, g.weight(f"{name}.weight_t", [n_in, n_out])])
        return g.op("Add", [y, g.weight(f"{name}.bias", [n_out])])

    def heads_of(x):  # [b, s, h] -> [b, a, s, hd]
        return g.op("Transpose", [g.op("Reshape", [x, g.const([batch, seq, heads, hd])])],
                    perm=[0, 2, 1, 3])

    def gelu(x):
        return g.op("Gelu", [x])

    steps = g.op("Range", [g.const([0], dims=[]), g.const([seq], dims=[]), g.const([1], dims=[])])
    future = g.op("Greater", [g.op("Unsqueeze", [steps, g.const([0])]),
                              g.op("Unsqueeze", [steps, g.const([1])])])
    mask = g.op("Where", [future, g.const([float("-inf")], TensorProto.FLOAT, []),
                          g.const([0.0], TensorProto.FLOAT, [])])

    h = g.op("Add", [g.op("Gather", [g.weight("wte.weight", [vocab, dim]), "ids"]),
                     g.op("Gather", [g.weight("wpe.weight", [seq, dim]), steps])])
    h = dropout(h)
    for layer in range(n_layers):
        p = f"h.{layer}"
        qkv = linear(layer_norm(h, f"{p}.ln_1"), f"{p}.attn.c_attn", dim, 3 * dim)
        q, k, v = (heads_of(part) for part in split3(g, qkv, dim))
        scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        scores = g.op("Add", [g.op("Div", [scores, g.const([math.sqrt(hd)], TensorProto.FLOAT,
                                                            [])]), mask])
        att = g.op("MatMul", [dropout(g.op("Softmax", [scores], axis=-1)), v])
        att = g.op("Reshape", [g.op("Transpose", [att], perm=[0, 2, 1, 3]),
                               g.const([batch, seq, dim])])
        h = g.op("Add", [h, dropout(linear(att, f"{p}.attn.c_proj", dim, dim))])
        x = gelu(linear(layer_norm(h, f"{p}.ln_2"), f"{p}.mlp.c_fc", dim, 4 * dim))
        h = g.op("Add", [h, dropout(linear(x, f"{p}.mlp.c_proj", 4 * dim, dim))])
    g.op("MatMul", [layer_norm(h, "ln_f"), g.weight("lm_head.weight_t", [dim, vocab])])
    return g.model(f"{config}_{n_layers}l", batch, seq, vocab, 20, "bench/gpt_shapes.py")


def split3(g, x, dim):
    """Split's three outputs along the last axis (q, k, v)."""
    names = [g.fresh("split") for _ in range(3)]
    g.nodes.append(helper.make_node("Split", [x, g.const([dim, dim, dim])], names,
                                    name=g.fresh("Split"), axis=-1))
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", choices=sorted(CONFIGS))
    parser.add_argument("out")
    parser.add_argument("--layers", type=int)
    parser.add_argument("--seq", type=int)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    onnx.save(build(args.config, args.seq, args.batch, args.layers), args.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks every reference kernel of dtc-run against numpy.

usage: check_kernels.py DTC_RUN WORKDIR

Each case is a one-op dtc function, inputs, and the result numpy computes
for them (the independent reference). The case's module and inputs are
written to WORKDIR, run with dtc-run, and the .npy outputs compared. Prints
one line per case and exits non-zero if any differs.
"""
import math
import os
import subprocess
import sys

import numpy as np

rng = np.random.default_rng(42)
MLIR_TYPES = {np.float32: "f32", np.float64: "f64", np.int64: "i64", np.int32: "i32",
              np.int8: "i8", np.uint8: "ui8", np.bool_: "i1", np.float16: "f16"}


def ttype(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + MLIR_TYPES[dtype] + ">"


def rand(shape, dtype=np.float32, low=-2.0, high=2.0):
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int(low) if low != -2.0 else -20, int(high) if high != 2.0 else 20,
                            shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def bf16(x):
    """Round float32 to bfloat16 (nearest even), returned as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


CASES = []


def case(name, body, inputs, expected, result_types, rtol=1e-5, atol=1e-6):
    """`body` uses %a, %b, ... for the inputs and ends with `return`."""
    CASES.append((name, body, inputs, expected, result_types, rtol, atol))


def unary(op, fn, x, dtype=np.float32, attrs=""):
    t = ttype(x.shape, dtype)
    case(op + attrs.replace(" ", "_"), f"%r = dtc.{op} %a {attrs} : {t}\n  return %r : {t}",
         [x], [fn(x.astype(np.float64)).astype(dtype) if dtype != np.bool_ else fn(x)], [t])


def binary(op, fn, a, b, out_dtype=None, prefix=""):
    out = fn(a, b)
    out_dtype = out_dtype or a.dtype.type
    out = np.asarray(out).astype(out_dtype)
    ta, tb, tr = ttype(a.shape, a.dtype.type), ttype(b.shape, b.dtype.type), ttype(out.shape, out_dtype)
    case(f"{op}{prefix}_{MLIR_TYPES[a.dtype.type]}",
         f"%r = dtc.{op} {prefix.strip('_') + ', ' if prefix else ''}%a, %b : ({ta}, {tb}) -> {tr}\n  return %r : {tr}",
         [a, b], [out], [tr])


x = rand((3, 4))
pos = rand((3, 4), low=0.1, high=3.0)
unary("neg", lambda v: -v, x)
unary("abs", np.abs, x)
unary("relu", lambda v: np.maximum(v, 0), x)
unary("exp", np.exp, x)
unary("log", np.log, pos)
unary("sqrt", np.sqrt, pos)
unary("rsqrt", lambda v: 1 / np.sqrt(v), pos)
unary("reciprocal", lambda v: 1 / v, pos)
unary("tanh", np.tanh, x)
unary("erf", np.vectorize(math.erf), x)
unary("sin", np.sin, x)
unary("cos", np.cos, x)
unary("sigmoid", lambda v: 1 / (1 + np.exp(-v)), x)
unary("silu", lambda v: v / (1 + np.exp(-v)), x)
unary("softplus", lambda v: np.log1p(np.exp(v)), x)
unary("gelu", lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))), x,
      attrs="approximate = none")
unary("gelu", lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))), x,
      attrs="approximate = tanh")
unary("neg", lambda v: -v, rand((5,), np.int32), np.int32)
unary("not", np.logical_not, rand((5,), np.bool_), np.bool_)
unary("exp", np.exp, rand((6,), np.float64), np.float64)

a, v = rand((2, 3, 4)), rand((3, 1))
binary("add", np.add, a, v)
binary("sub", np.subtract, v, a)
binary("mul", np.multiply, a, v)
binary("div", np.divide, a, rand((4,), low=0.5, high=2.0))
binary("pow", np.power, rand((3, 4), low=0.5, high=2.0), rand((4,)))
binary("max", np.maximum, a, v)
binary("min", np.minimum, a, v)
ia, ib = rand((2, 5), np.int32), rand((5,), np.int32, low=1, high=9)
binary("add", np.add, ia, ib)
binary("div", lambda p, q: np.trunc(p / q), ia, ib)  # truncation toward zero
binary("mul", lambda p, q: (p.astype(np.int64) * q).astype(np.int8),
       rand((4,), np.int8, low=50, high=120), rand((4,), np.int8, low=2, high=4))  # wraps
pa, pb = rand((2, 1), np.bool_), rand((3,), np.bool_)
binary("and", np.logical_and, pa, pb)
binary("or", np.logical_or, pa, pb)
binary("xor", np.logical_xor, pa, pb)
for pred, fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                 ("gt", np.greater), ("ge", np.greater_equal)]:
    q = np.round(a)
    binary("compare", fn, q, np.round(v), np.bool_, prefix=f" {pred}")

c, t, f = rand((3, 1), np.bool_), rand((3, 4)), rand((4,))
case("select", "%r = dtc.select %a, %b, %c : (tensor<3x1xi1>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>\n"
     "  return %r : tensor<3x4xf32>", [c, t, f], [np.where(c, t, f)], ["tensor<3x4xf32>"])

cx = rand((8,), low=-100, high=100)
case("cast_f32_i32", "%r = dtc.cast %a : tensor<8xf32> to tensor<8xi32>\n  return %r : tensor<8xi32>",
     [cx], [np.trunc(cx).astype(np.int32)], ["tensor<8xi32>"])
case("cast_f32_bf16", "%r = dtc.cast %a : tensor<8xf32> to tensor<8xbf16>\n  return %r : tensor<8xbf16>",
     [cx], [bf16(cx)], ["tensor<8xbf16>"], rtol=0, atol=0)
case("cast_f32_f16", "%r = dtc.cast %a : tensor<8xf32> to tensor<8xf16>\n  return %r : tensor<8xf16>",
     [cx], [cx.astype(np.float16)], ["tensor<8xf16>"], rtol=0, atol=0)
case("cast_f32_i1", "%r = dtc.cast %a : tensor<3xf32> to tensor<3xi1>\n  return %r : tensor<3xi1>",
     [np.array([0, 0.5, -2], np.float32)], [np.array([False, True, True])], ["tensor<3xi1>"])
case("cast_i64_i8", "%r = dtc.cast %a : tensor<3xi64> to tensor<3xi8>\n  return %r : tensor<3xi8>",
     [np.array([1, 200, -300], np.int64)], [np.array([1, 200, -300]).astype(np.int8)], ["tensor<3xi8>"])
# bf16 arithmetic rounds each op's result.
hb = bf16(rand((6,)))
case("add_bf16", "%x = dtc.cast %a : tensor<6xf32> to tensor<6xbf16>\n"
     "  %r = dtc.add %x, %x : (tensor<6xbf16>, tensor<6xbf16>) -> tensor<6xbf16>\n"
     "  %e = dtc.exp %r : tensor<6xbf16>\n  return %e : tensor<6xbf16>",
     [hb], [bf16(np.exp(hb + hb))], ["tensor<6xbf16>"], rtol=0, atol=0)

case("iota", "%r = dtc.iota dim = 1 : tensor<2x3xi64>\n  return %r : tensor<2x3xi64>", [],
     [np.broadcast_to(np.arange(3), (2, 3)).astype(np.int64)], ["tensor<2x3xi64>"])
case("constant", "%r = dtc.constant dense<[[1.5, 2.0], [3.0, -4.0]]> : tensor<2x2xf32>\n"
     "  return %r : tensor<2x2xf32>", [], [np.array([[1.5, 2], [3, -4]], np.float32)], ["tensor<2x2xf32>"])

r = rand((3, 4, 5))
for op, fn in [("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max),
               ("reduce_min", np.min)]:
    case(op, f"%r = dtc.{op} %a dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>\n  return %r : tensor<4xf32>",
         [r], [fn(r.astype(np.float64), axis=(0, 2)).astype(np.float32)], ["tensor<4xf32>"])
case("reduce_sum_keep", "%r = dtc.reduce_sum %a dims = [1] keep_dims : tensor<3x4x5xf32> -> tensor<3x1x5xf32>\n"
     "  return %r : tensor<3x1x5xf32>", [r], [r.sum(axis=1, keepdims=True)], ["tensor<3x1x5xf32>"])
ir = rand((3, 4), np.int32)
case("reduce_max_i32", "%r = dtc.reduce_max %a dims = [1] : tensor<3x4xi32> -> tensor<3xi32>\n"
     "  return %r : tensor<3xi32>", [ir], [ir.max(axis=1)], ["tensor<3xi32>"])


def softmax(z, axis):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


case("softmax", "%r = dtc.softmax %a dim = 1 : tensor<3x4x5xf32>\n  return %r : tensor<3x4x5xf32>",
     [r], [softmax(r.astype(np.float64), 1).astype(np.float32)], ["tensor<3x4x5xf32>"])
case("log_softmax", "%r = dtc.log_softmax %a dim = 2 : tensor<3x4x5xf32>\n  return %r : tensor<3x4x5xf32>",
     [r], [np.log(softmax(r.astype(np.float64), 2)).astype(np.float32)], ["tensor<3x4x5xf32>"])



def attention(q, k, v, scale, mask=None, keep=None, fill=-np.inf,
              probs=False):
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if mask is not None:
        s = s + mask
    if keep is not None:
        s = np.where(keep, s, fill)
    p = softmax(s, 3)
    return p if probs else np.einsum("bhqk,bhkd->bhqd", p, v)


aq, ak, av = rand((2, 4, 3, 5)), rand((2, 2, 6, 5)), rand((2, 2, 6, 7))
amask = rand((3, 6))
case("attention_gqa_mask",
     "%r, %p = dtc.attention %a, %b, %c mask %d scale = 0.25 : (tensor<2x4x3x5xf32>, "
     "tensor<2x2x6x5xf32>, tensor<2x2x6x7xf32>, tensor<3x6xf32>) -> "
     "(tensor<2x4x3x7xf32>, tensor<2x4x3x6xf32>)\n"
     "  return %r : tensor<2x4x3x7xf32>",
     [aq, ak, av, amask],
     [attention(*(x.astype(np.float64) for x in (aq, ak, av)), 0.25,
                mask=amask.astype(np.float64)).astype(np.float32)],
     ["tensor<2x4x3x7xf32>"])
akeep = np.tril(np.ones((3, 6), dtype=np.bool_), 2)
case("attention_bool_mask",
     "%r, %p = dtc.attention %a, %b, %c mask %d scale = 0.5 {masked_value = -30.0 : f64} : "
     "(tensor<2x4x3x5xf32>, tensor<2x2x6x5xf32>, tensor<2x2x6x7xf32>, tensor<3x6xi1>)"
     " -> (tensor<2x4x3x7xf32>, tensor<2x4x3x6xf32>)\n  return %p : tensor<2x4x3x6xf32>",
     [aq, ak, av, akeep],
     [attention(*(x.astype(np.float64) for x in (aq, ak, av)), 0.5,
                keep=akeep, fill=-30.0, probs=True).astype(np.float32)],
     ["tensor<2x4x3x6xf32>"])

g, b = rand((4, 5)), rand((4, 5))
mu = r.astype(np.float64).mean(axis=(1, 2), keepdims=True)
rstd = 1 / np.sqrt(r.astype(np.float64).var(axis=(1, 2), keepdims=True) + 1e-5)
case("layer_norm", "%y, %m, %s = dtc.layer_norm %a, %b, %c dim = 1 epsilon = 1.0e-05 : "
     "(tensor<3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> (tensor<3x4x5xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>)\n"
     "  return %y, %m, %s : tensor<3x4x5xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>",
     [r, g, b], [((r - mu) * rstd * g + b).astype(np.float32), mu.astype(np.float32), rstd.astype(np.float32)],
     ["tensor<3x4x5xf32>", "tensor<3x1x1xf32>", "tensor<3x1x1xf32>"])
g5 = rand((5,))
ms = np.sqrt((r.astype(np.float64) ** 2).mean(axis=2, keepdims=True) + 1e-6)
case("rms_norm", "%r = dtc.rms_norm %a, %b dim = 2 epsilon = 1.0e-06 : "
     "(tensor<3x4x5xf32>, tensor<5xf32>) -> tensor<3x4x5xf32>\n  return %r : tensor<3x4x5xf32>",
     [r, g5], [(r / ms * g5).astype(np.float32)], ["tensor<3x4x5xf32>"])

ma, mb = rand((2, 1, 3, 4)), rand((5, 6, 4))
case("matmul_batched_transpose", "%r = dtc.matmul %a, %b transpose_rhs : "
     "(tensor<2x1x3x4xf32>, tensor<5x6x4xf32>) -> tensor<2x5x3x6xf32>\n  return %r : tensor<2x5x3x6xf32>",
     [ma, mb], [(ma.astype(np.float64) @ np.swapaxes(mb, -1, -2)).astype(np.float32)], ["tensor<2x5x3x6xf32>"])
tl, tr = rand((4, 3)), rand((4, 2))
case("matmul_transpose_lhs", "%r = dtc.matmul %a, %b transpose_lhs : "
     "(tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>\n  return %r : tensor<3x2xf32>",
     [tl, tr], [(tl.T.astype(np.float64) @ tr).astype(np.float32)], ["tensor<3x2xf32>"])
mi, mj = rand((2, 3), np.int64), rand((3, 2), np.int64)
case("matmul_i64", "%r = dtc.matmul %a, %b : (tensor<2x3xi64>, tensor<3x2xi64>) -> tensor<2x2xi64>\n"
     "  return %r : tensor<2x2xi64>", [mi, mj], [mi @ mj], ["tensor<2x2xi64>"])

table, ids = rand((10, 3)), np.array([[0, 9, -1], [4, 4, 2]], np.int64)
case("gather", "%r = dtc.gather %a[%b] dim = 0 : (tensor<10x3xf32>, tensor<2x3xi64>) -> tensor<2x3x3xf32>\n"
     "  return %r : tensor<2x3x3xf32>", [table, ids], [table[ids]], ["tensor<2x3x3xf32>"])
case("gather_dim1", "%r = dtc.gather %a[%b] dim = 1 : (tensor<10x3xf32>, tensor<2xi32>) -> tensor<10x2xf32>\n"
     "  return %r : tensor<10x2xf32>", [table, np.array([2, 0], np.int32)], [table[:, [2, 0]]], ["tensor<10x2xf32>"])
case("reshape", "%r = dtc.reshape %a : tensor<3x4x5xf32> to tensor<12x5xf32>\n  return %r : tensor<12x5xf32>",
     [r], [r.reshape(12, 5)], ["tensor<12x5xf32>"])
case("transpose", "%r = dtc.transpose %a permutation = [2, 0, 1] : tensor<3x4x5xf32> -> tensor<5x3x4xf32>\n"
     "  return %r : tensor<5x3x4xf32>", [r], [r.transpose(2, 0, 1)], ["tensor<5x3x4xf32>"])
bx = rand((4, 1))
case("broadcast", "%r = dtc.broadcast %a : tensor<4x1xf32> to tensor<2x4x3xf32>\n  return %r : tensor<2x4x3xf32>",
     [bx], [np.broadcast_to(bx, (2, 4, 3))], ["tensor<2x4x3xf32>"])
ca, cb = rand((2, 3)), rand((2, 1))
case("concat", "%r = dtc.concat %a, %b, %a dim = 1 : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>\n"
     "  return %r : tensor<2x7xf32>", [ca, cb], [np.concatenate([ca, cb, ca], axis=1)], ["tensor<2x7xf32>"])
case("slice", "%r = dtc.slice %a starts = [2, 1, 4] sizes = [2, 2, 3] strides = [-1, 2, -2] : "
     "tensor<3x4x5xf32> -> tensor<2x2x3xf32>\n  return %r : tensor<2x2x3xf32>",
     [r], [r[2:0:-1, 1:4:2, 4::-2]], ["tensor<2x2x3xf32>"])
case("split", "%p, %q = dtc.split %a dim = 2 sizes = [2, 3] : tensor<3x4x5xf32> -> tensor<3x4x2xf32>, tensor<3x4x3xf32>\n"
     "  return %p, %q : tensor<3x4x2xf32>, tensor<3x4x3xf32>", [r], [r[:, :, :2], r[:, :, 2:]],
     ["tensor<3x4x2xf32>", "tensor<3x4x3xf32>"])

upd = rand((2, 3, 3))
scattered = table.copy().astype(np.float64)
np.add.at(scattered, ids, upd)
case("scatter_add", "%r = dtc.scatter_add %c into %a[%b] dim = 0 : "
     "(tensor<10x3xf32>, tensor<2x3xi64>, tensor<2x3x3xf32>) -> tensor<10x3xf32>\n  return %r : tensor<10x3xf32>",
     [table, ids, upd], [scattered.astype(np.float32)], ["tensor<10x3xf32>"])
window = rand((2, 2, 3))
updated = r.copy()
updated[2:0:-1, 1:4:2, 4::-2] = window
case("update_slice", "%r = dtc.update_slice %b into %a starts = [2, 1, 4] strides = [-1, 2, -2] : "
     "(tensor<2x2x3xf32>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>\n  return %r : tensor<3x4x5xf32>",
     [r, window], [updated], ["tensor<3x4x5xf32>"])

am = np.array([[1.0, 3.0, 3.0, -1.0], [np.nan, 0.0, np.nan, 2.0], [5.0, 5.0, 4.0, 5.0]], np.float32)
case("arg_max", "%r = dtc.arg_max %a dim = 1 : tensor<3x4xf32> -> tensor<3xi64>\n  return %r : tensor<3xi64>",
     [am], [np.argmax(am, axis=1).astype(np.int64)], ["tensor<3xi64>"])
ties = np.array([[1, 3, 3, -1], [5, 5, 4, 5], [2, 2, 2, 2]], np.float32)
case("arg_max_last", "%r = dtc.arg_max %a dim = 1 keep_dims select_last_index : tensor<3x4xf32> -> tensor<3x1xi64>\n"
     "  return %r : tensor<3x1xi64>",
     [ties], [(3 - np.argmax(ties[:, ::-1], axis=1)).reshape(3, 1).astype(np.int64)], ["tensor<3x1xi64>"])
cs = rand((3, 5))
case("cumsum", "%r = dtc.cumsum %a dim = 1 : tensor<3x5xf32>\n  return %r : tensor<3x5xf32>",
     [cs], [np.cumsum(cs.astype(np.float64), axis=1).astype(np.float32)], ["tensor<3x5xf32>"])
case("cumsum_exclusive_reverse", "%r = dtc.cumsum %a dim = 1 exclusive reverse : tensor<3x5xf32>\n"
     "  return %r : tensor<3x5xf32>", [cs],
     [(np.cumsum(cs[:, ::-1].astype(np.float64), axis=1)[:, ::-1] - cs).astype(np.float32)], ["tensor<3x5xf32>"])
ci = rand((6,), np.int32)
case("cumsum_i32", "%r = dtc.cumsum %a dim = 0 : tensor<6xi32>\n  return %r : tensor<6xi32>",
     [ci], [np.cumsum(ci).astype(np.int32)], ["tensor<6xi32>"])

src = rand((3, 5))
idx = np.array([[0, 4], [-1, 2], [3, 3]], np.int64)
case("gather_elements", "%r = dtc.gather_elements %a[%b] dim = 1 : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>\n"
     "  return %r : tensor<3x2xf32>", [src, idx], [np.take_along_axis(src, idx % 5, axis=1)], ["tensor<3x2xf32>"])
upd2 = rand((3, 2))
expected_scatter = src.astype(np.float64).copy()
for r in range(3):
    for c in range(2):
        expected_scatter[r, idx[r, c] % 5] += upd2[r, c]
case("scatter_elements_add", "%r = dtc.scatter_elements_add %c into %a[%b] dim = 1 : "
     "(tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>\n  return %r : tensor<3x5xf32>",
     [src, idx, upd2], [expected_scatter.astype(np.float32)], ["tensor<3x5xf32>"])
tk = np.array([[3, 1, 3, 2, 0], [5, 6, 7, 7, 1], [0, 0, 0, 0, 0]], np.float32)
order = np.argsort(-tk, axis=1, kind="stable")[:, :3]
case("top_k", "%v, %i = dtc.top_k %a k = 3 dim = 1 : tensor<3x5xf32> -> (tensor<3x3xf32>, tensor<3x3xi64>)\n"
     "  return %v, %i : tensor<3x3xf32>, tensor<3x3xi64>", [tk],
     [np.take_along_axis(tk, order, axis=1), order.astype(np.int64)], ["tensor<3x3xf32>", "tensor<3x3xi64>"])
low = np.argsort(tk, axis=1, kind="stable")[:, :2]
case("top_k_smallest", "%v, %i = dtc.top_k %a k = 2 dim = 1 smallest : tensor<3x5xf32> -> (tensor<3x2xf32>, tensor<3x2xi64>)\n"
     "  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>", [tk],
     [np.take_along_axis(tk, low, axis=1), low.astype(np.int64)], ["tensor<3x2xf32>", "tensor<3x2xi64>"])


def run_case(dtc_run, workdir, name, body, inputs, expected, result_types, rtol, atol):
    case_dir = os.path.join(workdir, name)
    os.makedirs(os.path.join(case_dir, "in"), exist_ok=True)
    names = "abcdefgh"
    args = ", ".join(f"%{names[i]}: {ttype(x.shape, x.dtype.type)} {{dtc.input = \"{names[i]}\"}}"
                     for i, x in enumerate(inputs))
    results = ", ".join(f"{t} {{dtc.output = \"out{i}\"}}" for i, t in enumerate(result_types))
    with open(os.path.join(case_dir, "case.mlir"), "w") as f:
        f.write(f"func.func @main({args}) -> ({results}) {{\n  {body}\n}}\n")
    for i, x in enumerate(inputs):
        np.save(os.path.join(case_dir, "in", names[i] + ".npy"), x)
    proc = subprocess.run([dtc_run, os.path.join(case_dir, "case.mlir"), "--inputs",
                           os.path.join(case_dir, "in"), "--outputs", os.path.join(case_dir, "out")],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return "dtc-run failed: " + proc.stderr.strip()
    for i, want in enumerate(expected):
        got = np.load(os.path.join(case_dir, "out", f"out{i}.npy"))
        if got.shape != want.shape:
            return f"out{i}: shape {got.shape} != {want.shape}"
        if want.dtype.kind in "biu":
            if got.dtype != want.dtype or not np.array_equal(got, want):
                return f"out{i}: {got} != {want}"
        elif not np.allclose(got, want.astype(np.float32), rtol=rtol, atol=atol):
            return f"out{i}: max abs error {np.max(np.abs(got - want)):.3g}"
    return None


def main():
    dtc_run, workdir = sys.argv[1], sys.argv[2]
    failed = 0
    for name, *rest in CASES:
        problem = run_case(dtc_run, workdir, name, *rest)
        print(f"{'FAIL' if problem else 'ok  '} {name}" + (f": {problem}" if problem else ""))
        failed += bool(problem)
    print(f"{len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

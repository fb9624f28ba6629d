#!/usr/bin/env python3
"""Checks the FLOPs per step in OUT/report.json against exact hand counts.

usage: check_flops.py OUT MODEL.onnx --family gpt2|llama [--dp N] [--tp N]
                      [--peak-flops F --peak-flops-f64 F --memory-bandwidth B]

Three independent checks of the report's matmul FLOPs per rank and step:

 1. 2*m*n*k per dtc.matmul: the sum over the matmuls of OUT/train_step.mlir,
    read from their types (batch * m * n from the result, k from the lhs);
 2. the closed form for the model family, with B, s, l, h, V (and for Llama
    h_kv and F) read from MODEL.onnx, whose projections must be exactly the
    family's (the formula holds for nothing else):
      gpt2:  72 B s l h^2 (1 + s/(6h) + V/(12 l h))   (Narayanan et al. 2021)
      llama: 72 B s l h^2 ((1 + h_kv/h)/6 + F/(4h) + s/(6h) + V/(12 l h))
    (docs/CostModel.md derives both), for the batch of one rank: B / dp,
    and every matmul split over tp;
 3. the phases: the forward is a third of the matmuls, the backward two
    thirds, the optimizer none; and the totals add up;
 4. with --peak-flops, --peak-flops-f64 and --memory-bandwidth (a device's
    datasheet figures for FP32, FP64 and memory), the roofline of an f32
    step on one device: its compute and memory times are the step's FLOPs
    and bytes at those rates.

Prints one line per check and exits 1 if any fails.
"""
import argparse
import json
import re
import sys
from collections import Counter
from fractions import Fraction

import onnx


def initializer_shapes(graph):
    return {t.name: list(t.dims) for t in graph.initializer}


def model_dims(path, family):
    """B, s, l, h, V (and h_kv, F) of a GPT-2- or Llama-style export."""
    graph = onnx.load(path, load_external_data=False).graph
    inits = initializer_shapes(graph)
    (ids,) = [i for i in graph.input if i.name == "ids"]
    batch, seq = [d.dim_value for d in ids.type.tensor_type.shape.dim]
    (embed,) = [n for n in graph.node
                if n.op_type == "Gather" and n.input[1] == "ids"]
    vocab, hidden = inits[embed.input[0]]
    # Projections: MatMul(x, Transpose(W)) with W an initializer [out, in].
    transposed = {n.output[0]: n.input[0] for n in graph.node
                  if n.op_type == "Transpose" and n.input[0] in inits}
    outputs = {o.name for o in graph.output}
    weights, head, activations = [], None, 0
    for n in graph.node:
        if n.op_type != "MatMul":
            continue
        if n.input[1] not in transposed:
            activations += 1
        elif n.output[0] in outputs:
            head = tuple(inits[transposed[n.input[1]]])
        else:
            weights.append(tuple(inits[transposed[n.input[1]]]))
    shapes = Counter(weights)
    dims = dict(B=batch, s=seq, h=hidden, V=vocab)
    h = hidden
    if head != (vocab, h):
        sys.exit(f"not a {family} model: LM head {head}, expected {(vocab, h)}")
    if family == "gpt2":
        layers = shapes[(3 * h, h)]
        expected = Counter({(3 * h, h): layers, (h, h): layers,
                            (4 * h, h): layers, (h, 4 * h): layers})
    else:
        # w2 is the one projection whose input is not h wide.
        (down,) = [s for s in shapes if s[1] != h]
        ffn = down[1]
        layers = shapes[down]
        kv = [s for s in shapes if s[1] == h and s[0] not in (h, ffn)]
        h_kv = kv[0][0] if kv else h
        expected = Counter({(h, h): 2 * layers, (h_kv, h): 2 * layers,
                            (ffn, h): 2 * layers, (h, ffn): layers})
        if h_kv == h:
            expected = Counter({(h, h): 4 * layers, (ffn, h): 2 * layers,
                                (h, ffn): layers})
        dims.update(h_kv=h_kv, F=ffn)
    dims["l"] = layers
    if shapes != expected or activations != 2 * layers:
        sys.exit(f"not a {family} model: projections {dict(shapes)}, "
                 f"{activations} activation matmuls; expected "
                 f"{dict(expected)}, {2 * layers}")
    return dims


def formula(family, d):
    B, s, l, h, V = (Fraction(d[k]) for k in "BslhV")
    if family == "gpt2":
        return 72 * B * s * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h))
    h_kv, F = Fraction(d["h_kv"]), Fraction(d["F"])
    return 72 * B * s * l * h**2 * ((1 + h_kv / h) / 6 + F / (4 * h)
                                    + s / (6 * h) + V / (12 * l * h))


TENSOR = r"tensor<([0-9x]*)x?[a-z][a-z0-9]*>"
MATMUL = re.compile(r"= dtc\.matmul ([^:]*):\s*\(" + TENSOR + r", " + TENSOR +
                    r"\) -> " + TENSOR)
# dtc.attention's q, k and v: its two products are 2*m*n*k matmuls too.
ATTENTION = re.compile(r"= dtc\.attention [^:]*:\s*\(" + TENSOR + r", " +
                       TENSOR + r", " + TENSOR)


def dims_of(text):
    return [int(x) for x in text.split("x") if x]


def ir_matmul_flops(path):
    """Sum of 2*m*n*k over the matmuls of the step, from their types, those
    inside attention included (q k^T and p v)."""
    total, count = 0, 0
    with open(path) as f:
        for line in f:
            if re.search(r"= dtc\.attention ", line):
                m = ATTENTION.search(line)
                if not m:
                    sys.exit(f"cannot read the types of: {line.strip()}")
                (b, h, sq, d), k, v = (dims_of(m.group(i)) for i in (1, 2, 3))
                total += 2 * b * h * sq * k[2] * (d + v[3])
                count += 2
                continue
            if not re.search(r"= dtc\.matmul ", line):
                continue
            m = MATMUL.search(line)
            if not m:
                sys.exit(f"cannot read the types of: {line.strip()}")
            lhs, result = dims_of(m.group(2)), dims_of(m.group(4))
            k = lhs[-2] if "transpose_lhs" in m.group(1) else lhs[-1]
            elements = 1
            for x in result:
                elements *= x
            total += 2 * elements * k
            count += 1
    return total, count


def number(x):
    return str(int(x)) if x == int(x) else repr(float(x))


def f64_scalar_ops(path):
    """The ops of the step computing in f64 (their first operand's type),
    which must all be elementwise ops on scalars: one FLOP each."""
    count = 0
    with open(path) as f:
        for line in f:
            m = re.search(r"= dtc\.(\w+) .* : \(?(tensor<[^>]*>)", line)
            if not m or m.group(1) == "constant" or "f64>" not in m.group(2):
                continue
            if m.group(2) != "tensor<f64>" or m.group(1) in ("matmul",
                                                            "reduce_sum"):
                sys.exit(f"not an f64 scalar op: {line.strip()}")
            count += 1
    return count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("model")
    parser.add_argument("--family", choices=["gpt2", "llama"], required=True)
    parser.add_argument("--dp", type=int, default=1)
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--peak-flops", type=float,
                        help="with --peak-flops-f64 and --memory-bandwidth: "
                        "check the roofline of an f32 step without "
                        "collectives")
    parser.add_argument("--peak-flops-f64", type=float)
    parser.add_argument("--memory-bandwidth", type=float)
    args = parser.parse_args()
    with open(f"{args.out}/report.json") as f:
        report = json.load(f)
    flops = report["flops_per_step"]
    d = model_dims(args.model, args.family)
    results = []

    def check(what, got, want):
        ok = got == want
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {what}: report {number(got)}, "
              f"expected {number(want)}")

    print("model: " + ", ".join(f"{k} {v}" for k, v in d.items()) +
          f"; dp {args.dp}, tp {args.tp}")
    ir, count = ir_matmul_flops(f"{args.out}/train_step.mlir")
    check(f"matmul FLOPs = sum of 2mnk over the {count} matmuls of the step",
          flops["matmul"], ir)
    per_rank = dict(d, B=Fraction(d["B"], args.dp))
    want = formula(args.family, per_rank) / args.tp
    check(f"matmul FLOPs = {args.family} formula", flops["matmul"], want)
    check("forward matmul FLOPs = 1/3", flops["forward"]["matmul"], want / 3)
    check("backward matmul FLOPs = 2/3", flops["backward"]["matmul"],
          2 * want / 3)
    check("optimizer matmul FLOPs = 0", flops["optimizer"]["matmul"], 0)
    kinds = ("matmul", "elementwise", "transcendental")
    check("total = matmul + elementwise + transcendental", flops["total"],
          sum(flops[k] for k in kinds))
    for kind in kinds + ("total",):
        check(f"{kind}: forward + backward + optimizer", flops[kind],
              sum(flops[p][kind] for p in ("forward", "backward", "optimizer")))
    if args.peak_flops:
        # The ops compute in f32 (or an integer type, at f32's rate), but
        # for AdamW's bias corrections, one FLOP each on f64 scalars: the
        # compute times add up to the FLOPs at those two peaks, the memory
        # times to all bytes at the bandwidth; each op's time is the larger.
        roof, moved = report["roofline_per_step"], report["bytes_per_step"]
        close = lambda a, b: abs(a - b) <= 1e-9 * abs(b)
        f64 = f64_scalar_ops(f"{args.out}/train_step.mlir")
        compute = ((flops["total"] - f64) / args.peak_flops +
                   f64 / args.peak_flops_f64)
        memory = (moved["read"] + moved["written"]) / args.memory_bandwidth
        ok = close(roof["compute_seconds"], compute)
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} roofline compute: report "
              f"{roof['compute_seconds']:.6e} s, expected {compute:.6e} s")
        ok = close(roof["memory_seconds"], memory)
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} roofline memory: report "
              f"{roof['memory_seconds']:.6e} s, expected {memory:.6e} s")
        ok = (max(compute, memory) <= roof["op_seconds"] * (1 + 1e-9)
              and roof["op_seconds"] <= (compute + memory) * (1 + 1e-9)
              and roof["collective_seconds"] == 0
              and close(roof["seconds"], roof["op_seconds"]))
        results.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} roofline step: "
              f"{roof['seconds']:.6e} s, between max and sum of the two")
    failed = results.count(False)
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Random graphs on random meshes, checked against one device.

A seeded property test of the partitioner. Each seed builds a small random
training step from the dialect's op table -- elementwise ops with
broadcasting, matmuls (with a weight, or batched between activations),
reductions, (log-)softmax and cumulative sums along any dimension,
reshapes that merge or split dimensions, transposes, slices, concats,
layer and RMS norms, embedding lookups -- over shapes some of which the
mesh divides and some not, then compiles it with dtc-training for a
random mesh (dp=2, tp=2, tp=4, dp=2 x tp=2; sometimes sequence
parallelism, ZeRO or gradient accumulation) with random starting layouts
for some parameters (unpinned --sharding-spec entries) and `verify`, the
loss sum(value^2 x w) over the last values made with w > 0; the
per-rank program, on simulated ranks, must give the single-device loss,
gradients and updates. A seed ends as passed, mismatched (--verify found a
difference), refused (the compiler stopped with an error) or crashed.

  random_graphs.py --tools build/bin --seeds 0:300 [--json FILE] [-v]

Exits non-zero unless every seed passed. --keep DIR keeps each failing
seed's step and command line.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile


def tensor(shape, elem="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


class Graph:
    """A function being built: its arguments, body lines and the float
    values it has made (SSA name -> shape)."""

    def __init__(self, rng):
        self.rng = rng
        self.args, self.lines, self.values = [], [], {}
        self.params = {}  # name -> shape
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def param(self, shape):
        name = f"p{len(self.params)}"
        ssa = f"%{name}"
        self.params[name] = shape
        self.args.append(f'{ssa}: {tensor(shape)} {{dtc.param = "{name}"}}')
        return ssa

    def emit(self, text, shape):
        ssa = self.fresh()
        self.lines.append(f"{ssa} = {text}")
        self.values[ssa] = shape
        return ssa

    def pick(self, rank=None):
        pool = [v for v, s in self.values.items() if rank is None or len(s) == rank]
        return self.rng.choice(pool) if pool else None


UNARY = ["tanh", "sigmoid", "neg", "abs", "relu", "silu", "sin", "cos", "erf"]
BINARY = ["add", "sub", "mul", "max", "min"]


def grow(g, op):
    """Adds one `op` to `g` on values it already has; False when none fits."""
    rng = g.rng
    x = g.pick()
    if x is None:
        return False
    s = g.values[x]
    r = len(s)
    if op == "unary":
        u = rng.choice(UNARY)
        g.emit(f"dtc.{u} {x} : {tensor(s)}", s)
    elif op == "gelu":
        g.emit(f"dtc.gelu {x} approximate = none : {tensor(s)}", s)
    elif op == "binary":
        b = rng.choice(BINARY)
        # Another value of the same shape, or a parameter of a suffix of it.
        same = [v for v, t in g.values.items() if t == s and v != x]
        if same and rng.random() < 0.5:
            y, t = rng.choice(same), s
        else:
            t = s[rng.randrange(r):] if r else s
            y = g.param(t)
        g.emit(f"dtc.{b} {x}, {y} : ({tensor(s)}, {tensor(t)}) -> {tensor(s)}", s)
    elif op == "matmul" and r >= 2:
        n = rng.choice([4, 6, 8, 12])
        if rng.random() < 0.5:
            w = g.param([n, s[-1]])
            g.emit(f"dtc.matmul {x}, {w} transpose_rhs : ({tensor(s)}, {tensor([n, s[-1]])}) "
                   f"-> {tensor(s[:-1] + [n])}", s[:-1] + [n])
        else:
            w = g.param([s[-1], n])
            g.emit(f"dtc.matmul {x}, {w} : ({tensor(s)}, {tensor([s[-1], n])}) "
                   f"-> {tensor(s[:-1] + [n])}", s[:-1] + [n])
    elif op == "bmm" and r == 3:
        # Scores between two activations of one shape: x y^T.
        same = [v for v, t in g.values.items() if t == s]
        y = rng.choice(same)
        g.emit(f"dtc.matmul {x}, {y} transpose_rhs : ({tensor(s)}, {tensor(s)}) "
               f"-> {tensor([s[0], s[1], s[1]])}", [s[0], s[1], s[1]])
    elif op == "reduce" and r >= 2:
        kind = rng.choice(["reduce_sum", "reduce_mean", "reduce_max"])
        d = rng.randrange(r)
        keep = rng.random() < 0.5
        out = s[:d] + ([1] if keep else []) + s[d + 1:]
        g.emit(f"dtc.{kind} {x} dims = [{d}]{' keep_dims' if keep else ''} : "
               f"{tensor(s)} -> {tensor(out)}", out)
    elif op == "softmax" and r >= 1:
        kind = rng.choice(["softmax", "log_softmax"])
        g.emit(f"dtc.{kind} {x} dim = {rng.randrange(r)} : {tensor(s)}", s)
    elif op == "cumsum" and r >= 1:
        g.emit(f"dtc.cumsum {x} dim = {rng.randrange(r)} : {tensor(s)}", s)
    elif op == "reshape" and r >= 2:
        d = rng.randrange(r - 1)
        if rng.random() < 0.5:
            out = s[:d] + [s[d] * s[d + 1]] + s[d + 2:]  # merge d, d+1
        else:
            f = [k for k in (2, 3) if s[-1] % k == 0 and s[-1] > k]
            if not f:
                return False
            k = rng.choice(f)
            out = s[:-1] + [k, s[-1] // k]  # split the last
        g.emit(f"dtc.reshape {x} : {tensor(s)} to {tensor(out)}", out)
    elif op == "transpose" and r >= 2:
        perm = list(range(r))
        rng.shuffle(perm)
        out = [s[p] for p in perm]
        g.emit(f"dtc.transpose {x} permutation = [{', '.join(map(str, perm))}] : "
               f"{tensor(s)} -> {tensor(out)}", out)
    elif op == "slice" and r >= 1:
        d = rng.randrange(r)
        if s[d] < 2:
            return False
        size = rng.randrange(1, s[d])
        start = rng.randrange(0, s[d] - size + 1)
        starts = [start if k == d else 0 for k in range(r)]
        sizes = [size if k == d else s[k] for k in range(r)]
        out = sizes
        g.emit(f"dtc.slice {x} starts = {starts} sizes = {sizes} strides = {[1] * r} : "
               f"{tensor(s)} -> {tensor(out)}", out)
    elif op == "concat" and r >= 1:
        d = rng.randrange(r)
        others = [v for v, t in g.values.items()
                  if len(t) == r and all(t[k] == s[k] for k in range(r) if k != d)]
        y = rng.choice(others)
        t = g.values[y]
        out = list(s)
        out[d] = s[d] + t[d]
        g.emit(f"dtc.concat {x}, {y} dim = {d} : ({tensor(s)}, {tensor(t)}) -> {tensor(out)}",
               out)
    elif op == "norm" and r >= 2:
        w = g.param([s[-1]])
        if rng.random() < 0.5:
            g.emit(f"dtc.rms_norm {x}, {w} dim = {r - 1} epsilon = 1.0e-05 : "
                   f"({tensor(s)}, {tensor([s[-1]])}) -> {tensor(s)}", s)
        else:
            bias = g.param([s[-1]])
            mean = s[:-1] + [1]
            ssa = g.fresh()
            g.lines.append(f"{ssa}:3 = dtc.layer_norm {x}, {w}, {bias} dim = {r - 1} "
                           f"epsilon = 1.0e-05 : ({tensor(s)}, {tensor([s[-1]])}, "
                           f"{tensor([s[-1]])}) -> ({tensor(s)}, {tensor(mean)}, "
                           f"{tensor(mean)})")
            g.values[f"{ssa}#0"] = s
    else:
        return False
    return True


OPS = ["unary", "gelu", "binary", "binary", "matmul", "matmul", "bmm", "reduce", "softmax",
       "cumsum", "reshape", "transpose", "slice", "concat", "norm"]


def build(seed):
    """The step of `seed` and the compile options to try it with."""
    rng = random.Random(seed)
    mesh = rng.choice(["dp=2", "tp=2", "tp=4", "dp=2,tp=2", "tp=2,dp=2"])
    dp = "dp" in mesh
    batch = rng.choice([2, 4] if dp else [2, 3, 4])
    seq = rng.choice([4, 6, 8])
    width = rng.choice([4, 6, 8, 12])
    g = Graph(rng)
    g.args.append(f'%x: {tensor([batch, seq, width])} {{dtc.input = "x"}}')
    g.values["%x"] = [batch, seq, width]
    if rng.random() < 0.5:
        vocab = rng.choice([8, 12])
        g.args.append(f'%ids: {tensor([batch, seq], "i64")} {{dtc.input = "ids"}}')
        table = g.param([vocab, width])
        g.emit(f"dtc.gather {table}[%ids] dim = 0 : ({tensor([vocab, width])}, "
               f"{tensor([batch, seq], 'i64')}) -> {tensor([batch, seq, width])}",
               [batch, seq, width])
    for _ in range(rng.randrange(3, 9)):
        for _attempt in range(10):
            if grow(g, rng.choice(OPS)):
                break
    # At least one parameter to train.
    while not g.params:
        grow(g, "binary")
    # The loss: sum(value^2 x w) over the last two values made (w > 0: a sum
    # of positive terms, whose relative error means something, unlike one
    # that cancels to about 0).
    made = list(g.values)[-2:]
    terms = []
    for k, v in enumerate(made):
        s = g.values[v]
        w = g.emit(f"dtc.constant dense<{rng.choice([0.5, 0.25, 1.5])}> : {tensor(s)}", s)
        sq = g.emit(f"dtc.mul {v}, {v} : ({tensor(s)}, {tensor(s)}) -> {tensor(s)}", s)
        m = g.emit(f"dtc.mul {sq}, {w} : ({tensor(s)}, {tensor(s)}) -> {tensor(s)}", s)
        dims = ", ".join(map(str, range(len(s))))
        terms.append(g.emit(f"dtc.reduce_sum {m} dims = [{dims}] : {tensor(s)} -> tensor<f32>",
                            []))
    loss = terms[0]
    for t in terms[1:]:
        loss = g.emit(f"dtc.add {loss}, {t} : (tensor<f32>, tensor<f32>) -> tensor<f32>", [])
    text = ("func.func @train_step(" + ", ".join(g.args) +
            ') -> (tensor<f32> {dtc.output = "loss"}) {\n  ' +
            "\n  ".join(g.lines) +
            f"\n  return {loss} : tensor<f32>\n}}\n")
    # Starting layouts: some parameters along a dimension the mesh's tp divides.
    tp = {"tp=2": 2, "tp=4": 4, "dp=2,tp=2": 2, "tp=2,dp=2": 2}.get(mesh, 0)
    spec = {}
    if tp:
        for name, shape in g.params.items():
            dims = [d for d, n in enumerate(shape) if n % tp == 0]
            if dims and rng.random() < 0.5:
                d = rng.choice(dims)
                layout = [[] for _ in shape]
                layout[d] = ["tp"]
                spec["^" + name + "$"] = {"dims": layout, "pinned": False}
    options = [f"mesh={mesh}", "loss=output:loss", "optimizer=adamw", "lr=0.01",
               "verify=1", f"verify-seed={seed}"]
    if tp and seq % tp == 0 and rng.random() < 0.3:
        options.append("sequence-parallel=1")
    if dp and rng.random() < 0.3:
        options.append(f"zero={rng.choice([1, 2, 3])}")
    if dp and batch == 4 and rng.random() < 0.3:
        options.append("grad-accum=2")
    if rng.random() < 0.5:
        options.append("tp-strategy=none")
    return text, spec, options


def run_seed(tools, seed, keep, timeout):
    text, spec, options = build(seed)
    with tempfile.TemporaryDirectory() as workdir:
        step = os.path.join(workdir, "step.mlir")
        with open(step, "w") as f:
            f.write(text)
        if spec:
            path = os.path.join(workdir, "spec.json")
            with open(path, "w") as f:
                json.dump(spec, f)
            options.append(f"sharding-spec={path}")
        command = [tools["dtc-opt"], step, "--dtc-training=" + " ".join(options),
                   "--mlir-print-op-on-diagnostic=false", "-o", os.devnull]
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            status = ("passed" if run.returncode == 0
                      else "crashed" if run.returncode < 0
                      else "mismatched" if "--verify: " in run.stderr
                      else "refused" if "error:" in run.stderr else "crashed")
            detail = run.stderr.strip()[-500:] if run.returncode else ""
        except subprocess.TimeoutExpired:
            status, detail = "crashed", "timed out"
        if status != "passed" and keep:
            os.makedirs(os.path.join(keep, str(seed)), exist_ok=True)
            for f in os.listdir(workdir):
                shutil.copy(os.path.join(workdir, f), os.path.join(keep, str(seed), f))
            with open(os.path.join(keep, str(seed), "command"), "w") as f:
                f.write(" ".join(command) + "\n")
    return seed, status, " ".join(options[:1] + options[5:]), detail


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", required=True, help="directory holding dtc-opt")
    parser.add_argument("--seeds", default="0:300", help="FIRST:END (END excluded)")
    parser.add_argument("--json", help="write the counts here")
    parser.add_argument("--keep", help="keep failing seeds' steps in this directory")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    tools = {"dtc-opt": os.path.join(args.tools, "dtc-opt")}
    first, end = (int(x) for x in args.seeds.split(":"))
    counts = collections.Counter()
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for seed, status, options, detail in pool.map(
                lambda s: run_seed(tools, s, args.keep, args.timeout), range(first, end)):
            counts[status] += 1
            if status != "passed":
                failures.append((seed, status, options, detail))
            if args.verbose:
                print(f"{status:10} seed {seed} ({options})")
    for seed, status, options, detail in failures:
        print(f"{status.upper()} seed {seed} ({options}): {detail}")
    total = sum(counts.values())
    print(f"{total} seeds: {counts['passed']} passed, {counts['mismatched']} mismatched, "
          f"{counts['refused']} refused, {counts['crashed']} crashed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seeds": total, **{k: counts[k] for k in
                                          ("passed", "mismatched", "refused", "crashed")}},
                      f, indent=1)
    return 0 if counts["passed"] == total else 1


if __name__ == "__main__":
    sys.exit(main())

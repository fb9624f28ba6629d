#!/usr/bin/env python3
"""Sharding conformance: ONNX's node tests with their operands split over ranks.

For every ONNX node test that passes on one device (run_onnx_node_tests.py),
and for every dimension of a floating-point operand that 2 divides, the op
runs on 2 ranks (tp=2) with that operand split along that dimension and the
others replicated (and on tp=4 where 4 divides it); for ops with two such operands, also with both split
along different dimensions over tp; with an operand split along dimension 0
as data parallelism splits a batch (dp=2: it becomes a model input); and on
a 2x2 mesh (dp=2, tp=2) with one operand split along dimension 0 over dp
and another along another dimension over tp. dtc-compile --verify's machinery
(dtc-training's verify, dtc-verify-partition) is the judge: each operand
becomes a parameter holding the test's data, the loss is
sum(outputs x fixed random weights), and the per-rank program, on simulated
ranks, must give the single-device loss (the forward: a random linear
functional of every output) and the gradients with respect to every operand
(the VJP) within the training tests' tolerances; an operand split over dp
is a model input, whose gradient a step does not compute. Ops without a
VJP are checked forward only (their operands frozen). The split is a starting
layout the partitioner may reshard (an unpinned --sharding-spec entry).

With --mpirun, every case that passes also runs for real: the per-rank
program for one step on the ranks of `mpirun` (the MPI engine) and the
single-device step under dtc-run, their losses (1e-5) and gradients (1e-4,
relative L2) compared.

Each case ends as one of:
  local       the op ran on the parts (its sharding rule kept the split)
  resharded   passed, with an all-gather the partitioner inserted
  mismatched  --verify found the ranks disagree with one device
  refused     the compiler stopped with an error
  crashed     a tool died or hung
Prints a table by op and the totals; --json FILE writes
{"cases", "passed", "mismatched", "refused", "crashed", "by_op"}. Exits
non-zero unless mismatched = refused = crashed = 0.

Needs numpy and onnx (Debian: python3-numpy python3-onnx).
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
MPIRUN = os.path.join(HERE, "..", "Utils", "mpirun.sh")
spec = importlib.util.spec_from_file_location("node_tests",
                                              os.path.join(HERE, "run_onnx_node_tests.py"))
node_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(node_tests)

ARG = re.compile(r'(%arg\d+): (tensor<[^>]*>) \{dtc\.input = "([^"]*)"\}')
RETURN = re.compile(r"^\s*return (.*) : (.*)$", re.M)
FLOATS = {"f32": np.float32, "f64": np.float64, "f16": np.float16}


def parse_function(text):
    """The imported @forward: its arguments (name, SSA id, shape, element
    type), its result types and the operands of its return."""
    args = [{"ssa": m.group(1), "type": m.group(2), "elem": elem_of(m.group(2)),
             "shape": shape_of(m.group(2)), "name": m.group(3)}
            for m in ARG.finditer(text)]
    ret = RETURN.search(text)
    values = [v.strip() for v in ret.group(1).split(",")]
    return args, list(zip(values, split_types(ret.group(2))))


def split_types(text):
    """'tensor<2x3xf32>, tensor<i64>' -> the types (commas inside <> kept)."""
    types, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            types.append(current.strip())
            current = ""
        else:
            current += ch
    types.append(current.strip())
    return types


def dense(array, mlir_type):
    """`dense<"0x...">` holding `array`'s bytes (little endian), as MLIR
    reads hex element data."""
    return f'dense<"0x{array.tobytes().hex().upper()}"> : {mlir_type}'


def elem_of(mlir_type):
    return re.match(r"tensor<(?:[0-9]+x)*(\w+)>", mlir_type).group(1)


def shape_of(mlir_type):
    dims = re.match(r"tensor<((?:[0-9]+x)*)\w+>", mlir_type).group(1)
    return [int(d) for d in dims.split("x") if d]


def training_module(text, inputs, trainable, seed, as_input=None):
    """The imported function as a training step: its floating-point inputs
    become parameters holding the test's data (frozen unless `trainable`),
    and it returns one loss, sum over outputs of sum(output x W) with fixed
    random W (outputs of other types cast to f32 first). The operand named
    `as_input` stays a model input (holding the test's data too), for data
    parallelism to split. None when it has no floating-point input."""
    args, results = parse_function(text)
    params = [a for a in args if a["elem"] in FLOATS]
    if not params:
        return None, []
    rng = np.random.default_rng(seed)
    for a in params:
        value = inputs.get(a["name"])
        if value is None:
            return None, []
        value = np.ascontiguousarray(value.astype(FLOATS[a["elem"]]))
        role = "dtc.input" if a["name"] == as_input else "dtc.param"
        attrs = f'{role} = "{a["name"]}", dtc.value = {dense(value, a["type"])}'
        if not trainable and role == "dtc.param":
            attrs += ", dtc.trainable = false"
        text = text.replace(f'{a["ssa"]}: {a["type"]} {{dtc.input = "{a["name"]}"}}',
                            f'{a["ssa"]}: {a["type"]} {{{attrs}}}', 1)
    lines, terms = [], []
    for k, (value, mlir_type) in enumerate(results):
        shape = shape_of(mlir_type)
        f32 = "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"
        if elem_of(mlir_type) != "f32":
            lines.append(f"%vc{k} = dtc.cast {value} : {mlir_type} to {f32}")
            value = f"%vc{k}"
        weights = rng.standard_normal(shape).astype(np.float32)
        lines.append(f"%vw{k} = dtc.constant {dense(weights, f32)}")
        lines.append(f"%vm{k} = dtc.mul {value}, %vw{k} : ({f32}, {f32}) -> {f32}")
        dims = ", ".join(str(d) for d in range(len(shape)))
        lines.append(f"%vs{k} = dtc.reduce_sum %vm{k} dims = [{dims}] : {f32} -> tensor<f32>")
        terms.append(f"%vs{k}")
    loss = terms[0]
    for k, term in enumerate(terms[1:]):
        lines.append(f"%vl{k} = dtc.add {loss}, {term} : (tensor<f32>, tensor<f32>) -> tensor<f32>")
        loss = f"%vl{k}"
    lines.append(f"return {loss} : tensor<f32>")
    body = "\n    ".join(lines)
    ret = RETURN.search(text)
    text = text[:ret.start()] + "\n    " + body + text[ret.end():]
    # The signature's results: the one loss (and no record of the graph's
    # input order, for binding by position: the step binds by name).
    text = re.sub(r" attributes \{dtc\.graph_inputs = \[[^\]]*\]\}", "", text, count=1)
    text = re.sub(r"-> \(.*\) \{\n", '-> (tensor<f32> {dtc.output = "loss"}) {\n', text, count=1)
    text = re.sub(r"-> (tensor<[^>]*>) \{\n", '-> (tensor<f32> {dtc.output = "loss"}) {\n',
                  text, count=1)
    text = text.replace("@forward(", "@train_step(", 1)
    return text, params


def splits(params, others):
    """The cases, each (mesh, ((operand, dimension, axis), ...)): each
    operand along each dimension 2 divides over tp; the first few pairs of
    operands along different such dimensions over tp; each operand along
    each dimension 4 divides over tp=4; each operand along
    dimension 0 over dp; and on dp=2 x tp=2 the first few pairs of one
    operand along dimension 0 over dp and another along another dimension
    over tp (when the shapes of the other model inputs, `others`, let data
    parallelism split them too)."""
    single = [(a["name"], d) for a in params for d, n in enumerate(a["shape"])
              if n % 2 == 0]
    cases = [("tp=2", ((a, d, "tp"),)) for a, d in single]
    pairs = [(a, b) for a, b in itertools.combinations(single, 2)
             if a[0] != b[0] and a[1] != b[1]]
    cases += [("tp=2", ((a[0], a[1], "tp"), (b[0], b[1], "tp"))) for a, b in pairs[:4]]
    cases += [("tp=4", ((a["name"], d, "tp"),)) for a in params
              for d, n in enumerate(a["shape"]) if n % 4 == 0]
    # Data parallelism splits every model input: the others' batches must
    # divide too.
    if any(not shape or shape[0] % 2 for shape in others):
        return cases
    cases += [("dp=2", ((a, 0, "dp"),)) for a, d in single if d == 0]
    mixed = [(a, b) for a, b in itertools.permutations(single, 2)
             if a[1] == 0 and a[0] != b[0] and b[1] != 0]
    cases += [("dp=2,tp=2", ((a[0], 0, "dp"), (b[0], b[1], "tp"))) for a, b in mixed[:4]]
    return cases


def run_case(tools, workdir, module, params, mesh, case, timeout, batch=None):
    """('local'|'resharded'|'mismatched'|'refused'|'crashed', detail); with
    `batch` (the model inputs' data), also under mpirun."""
    rank = {a["name"]: len(a["shape"]) for a in params}
    rules = {}
    for name, dim, axis in case:
        if axis == "tp":
            dims = [[] for _ in range(rank[name])]
            dims[dim] = ["tp"]
            rules["^" + re.escape(name) + "$"] = {"dims": dims, "pinned": False}
    options = f"loss=output:loss optimizer=sgd lr=0.1 mesh={mesh} verify=1 verify-noise=0"
    if rules:
        spec_path = os.path.join(workdir, "spec.json")
        with open(spec_path, "w") as f:
            json.dump(rules, f)
        options += f" tp-strategy=none sharding-spec={spec_path}"
    out = os.path.join(workdir, "out.mlir")
    try:
        run = subprocess.run([tools["dtc-opt"], module, f"--dtc-training={options}",
                              "--mlir-print-op-on-diagnostic=false", "-o", out],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crashed", "timed out"
    if run.returncode < 0:
        return "crashed", f"signal {-run.returncode}: {run.stderr.strip()[-300:]}"
    if run.returncode != 0:
        if "--verify: " in run.stderr:
            return "mismatched", run.stderr.strip()[-600:]
        if "error:" in run.stderr:
            return "refused", run.stderr.strip()[-600:]
        return "crashed", run.stderr.strip()[-300:]
    with open(out) as f:
        status = "resharded" if "dtc.resharding" in f.read() else "local"
    if batch is not None:
        problem = run_on_ranks(tools, workdir, module, out, mesh, batch, timeout)
        if problem:
            return ("crashed" if problem.startswith("crashed") else "mismatched"), problem
    return status, ""


def run_on_ranks(tools, workdir, module, per_rank, mesh, batch, timeout):
    """One step of `per_rank` on the ranks of mpirun against one of the
    single-device step under dtc-run: what differs, or ''."""
    ranks = 1
    for axis in mesh.split(","):
        ranks *= int(axis.split("=")[1])
    one = os.path.join(workdir, "one")
    on_ranks = os.path.join(workdir, "ranks")
    for d in (one, on_ranks):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    shutil.copy(per_rank, os.path.join(on_ranks, "train_step.mlir"))
    built = subprocess.run([tools["dtc-opt"], module,
                            "--dtc-training=loss=output:loss optimizer=sgd lr=0.1",
                            "-o", os.path.join(one, "train_step.mlir")],
                           capture_output=True, text=True, timeout=timeout)
    if built.returncode:
        return "crashed: single-device step: " + built.stderr.strip()[-300:]
    batch_dir = os.path.join(workdir, "batch")
    shutil.rmtree(batch_dir, ignore_errors=True)
    os.makedirs(batch_dir)
    for name, value in batch.items():
        np.save(os.path.join(batch_dir, name + ".npy"), value)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1")
    dumps = []
    for directory, launch in ((one, []), (on_ranks, [MPIRUN, "-np", str(ranks)])):
        dump = directory + "-dump"
        shutil.rmtree(dump, ignore_errors=True)
        try:
            run = subprocess.run(launch + [tools["dtc-run"], directory, "--batch", batch_dir,
                                           "--steps", "1", "--dump", dump],
                                 capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return "crashed: dtc-run timed out"
        if run.returncode:
            return f"crashed: dtc-run ({ranks if launch else 1} ranks): " + \
                run.stderr.strip()[-300:]
        dumps.append(dump)
    loss = [float(np.load(os.path.join(d, "loss.npy"))[0]) for d in dumps]
    if abs(loss[1] - loss[0]) > 1e-5 * abs(loss[0]):
        return f"under mpirun: loss {loss[1]:.8g} vs {loss[0]:.8g} on one device"
    # (None: an op checked forward only.)
    grad_dir = os.path.join(dumps[0], "grad")
    grads = sorted(os.listdir(grad_dir)) if os.path.isdir(grad_dir) else []
    values = [[np.load(os.path.join(d, "grad", g)).astype(np.float64) for g in grads]
              for d in dumps]
    largest = max([np.linalg.norm(v) for v in values[0]] + [1e-30])
    for g, expected, actual in zip(grads, *values):
        error = np.linalg.norm(actual - expected)
        if error > 1e-4 * max(np.linalg.norm(expected), 1e-6 * largest):
            return f"under mpirun: gradient {g[:-4]} off by {error:.3g}"
    return ""


def run_test(tools, test_dir, timeout, mpirun=False):
    """The cases of one node test: (op, mode, case, status, detail), or a
    reason it has none."""
    with tempfile.TemporaryDirectory() as workdir:
        status, detail = node_tests.run_test(tools, test_dir, workdir)
        if status != "pass":
            return [], f"not passing on one device ({status})"
        graph = onnx.load(os.path.join(test_dir, "model.onnx")).graph
        ops = sorted({node.op_type for node in graph.node})
        data_dir = os.path.join(test_dir, "test_data_set_0")
        declared = {v.name: v.type.tensor_type.elem_type for v in graph.input}
        inputs = {}
        names = [v.name for v in graph.input]
        for k, f in enumerate(sorted(f for f in os.listdir(data_dir) if f.startswith("input_"))):
            name, array = node_tests.load_pb(os.path.join(data_dir, f), declared)
            inputs[name or names[k]] = array
        for f in os.listdir(data_dir):
            if f.startswith("output_"):
                _, expected = node_tests.load_pb(os.path.join(data_dir, f), {})
                if expected.dtype.kind == "f" and not np.all(np.isfinite(expected)):
                    return [], "outputs that are not finite"
        # (A NaN or infinity in the operands of an op with float results
        # makes the loss one too: nothing to compare.)
        float_results = any(v.type.tensor_type.elem_type in (
            onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
            onnx.TensorProto.BFLOAT16) for v in graph.output)
        if float_results and any(a.dtype.kind == "f" and not np.all(np.isfinite(a))
                                 for a in inputs.values()):
            return [], "operands that are not finite"
        with open(os.path.join(workdir, "model.mlir")) as f:
            imported = f.read()
        op = "+".join(ops)
        module = os.path.join(workdir, "step.mlir")

        def write(trainable, as_input=None):
            text, params = training_module(imported, inputs, trainable, len(op), as_input)
            if text is not None:
                with open(module, "w") as f:
                    f.write(text)
            return params

        # Ops without a VJP: forward only, operands frozen.
        for trainable in (True, False):
            params = write(trainable)
            if not params:
                return [], "no floating-point operand"
            probe = subprocess.run([tools["dtc-opt"], module,
                                    "--dtc-training=loss=output:loss optimizer=sgd",
                                    "-o", os.devnull], capture_output=True, text=True,
                                   timeout=timeout)
            if probe.returncode == 0:
                break
        if probe.returncode != 0:
            return [], "no training step: " + probe.stderr.strip()[-200:]
        others = [a["shape"] for a in parse_function(imported)[0] if a["elem"] not in FLOATS]
        cases = splits(params, others)
        if not cases:
            return [], "no operand dimension 2 divides"
        mode = "vjp" if trainable else "forward"
        results = []
        for mesh, case in cases:
            dp = [name for name, _, axis in case if axis == "dp"]
            write(trainable, dp[0] if dp else None)
            batch = None
            if mpirun:
                # The model inputs' data: the integer ones, and the operand
                # data parallelism splits.
                batch = {a["name"]: inputs[a["name"]]
                         for a in parse_function(imported)[0]
                         if a["elem"] not in FLOATS or a["name"] in dp}
            status, detail = run_case(tools, workdir, module, params, mesh, case, timeout,
                                      batch)
            results.append((op, mode, (mesh,) + case, status, detail))
        return results, ""


def describe(case):
    """'tp=2: a along 1, b along 0 over tp'."""
    if len(case) < 2:
        return str(case)
    mesh, *splits_ = case
    return mesh + ": " + ", ".join(f"{n} along {d} over {axis}" for n, d, axis in splits_)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", required=True,
                        help="directory holding dtc-translate, dtc-run and dtc-opt")
    parser.add_argument("--node-dir", default="/usr/share/libonnx-testdata/data/node")
    parser.add_argument("--filter", default="",
                        help="only tests whose name matches this regex")
    parser.add_argument("--json", help="write the summary here")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--mpirun", action="store_true",
                        help="also run every passing case on the ranks of mpirun")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    tools = {t: os.path.join(args.tools, t) for t in ("dtc-translate", "dtc-run", "dtc-opt")}
    pattern = re.compile(args.filter)
    tests = sorted(d for d in os.listdir(args.node_dir) if pattern.search(d))
    if not tests:
        print(f"no node tests match in {args.node_dir}", file=sys.stderr)
        return 1

    def job(test):
        try:
            return test, *run_test(tools, os.path.join(args.node_dir, test), args.timeout,
                                   args.mpirun)
        except subprocess.TimeoutExpired:
            return test, [("?", "?", ("?",), "crashed", "timed out")], ""

    statuses = ("local", "resharded", "mismatched", "refused", "crashed")
    by_op = collections.defaultdict(collections.Counter)
    totals = collections.Counter()
    no_cases = collections.Counter()
    problems = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for test, results, why in pool.map(job, tests):
            if not results:
                no_cases[why.split(":")[0]] += 1
            for op, mode, case, status, detail in results:
                by_op[op][status] += 1
                by_op[op][mode] += 1
                totals[status] += 1
                if status in ("mismatched", "refused", "crashed"):
                    problems.append((test, case, status, detail))
                if args.verbose:
                    split = describe(case)
                    print(f"{status:10} {test} [{mode}] {split} {detail[:200]}")

    width = max([len(op) for op in by_op] + [2])
    print(f"{'op':{width}}  cases   vjp  local  resharded  mismatched  refused  crashed")
    for op in sorted(by_op):
        c = by_op[op]
        n = sum(c[s] for s in statuses)
        print(f"{op:{width}}  {n:5} {c['vjp']:5} {c['local']:6} {c['resharded']:10} "
              f"{c['mismatched']:11} {c['refused']:8} {c['crashed']:8}")
    for test, case, status, detail in problems:
        split = describe(case)
        print(f"{status.upper()} {test} ({split}): {detail}")
    if no_cases:
        print("Tests without cases, by reason:")
        for why, n in sorted(no_cases.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:4}  {why}")
    cases = sum(totals[s] for s in statuses)
    passed = totals["local"] + totals["resharded"]
    print(f"{cases} cases: {passed} passed ({totals['local']} local, "
          f"{totals['resharded']} resharded), {totals['mismatched']} mismatched, "
          f"{totals['refused']} refused, {totals['crashed']} crashed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cases": cases, "passed": passed, "mismatched": totals["mismatched"],
                       "refused": totals["refused"], "crashed": totals["crashed"],
                       "by_op": {op: {s: c[s] for s in statuses + ("vjp", "forward")}
                                 for op, c in sorted(by_op.items())}}, f, indent=1)
    return 0 if totals["mismatched"] + totals["refused"] + totals["crashed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

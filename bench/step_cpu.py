#!/usr/bin/env python3
"""A training step on the CPU, side by side: dtc's compiled program, PyTorch
eager and ONNX Runtime training, on the same model, batch, initialisation,
AdamW and thread count.

Run with Debian's Python from the repository root, after building:
  /usr/bin/python3 bench/step_cpu.py [--models tiny_gpt,tiny_llama,medium_gpt]
      [--blocks 5] [--steps 20] [--warmup 3] [--threads 1] [--parts peers,dtc-alone]
The models come from bench/step_models.py (exported here into a temporary
directory). ONNX Runtime training (onnxruntime-training-cpu 1.19.2) is
installed from the Python index into its own venv (--ort-venv, over Debian's
Python so that its onnx and torch stay visible) the first time.

For each model: dtc-compile, ORT's training artifacts (the logits flattened to
[tokens, vocabulary] for ORT's cross-entropy, LayerNorm's optional outputs
named, AdamW's adam_mode set to PyTorch's 0: ../shared/notes/peer-anchors.md),
then a check that the first three losses of PyTorch and ORT equal dtc's
(1e-5 relative), then BLOCKS interleaved blocks, each running every engine
in a fresh process for WARMUP + STEPS steps; an engine's figure in a block
is the median of its STEPS step times, and the printed figures and ratios
are medians over the blocks. The bench prints each engine's 1024^3 GEMM
GFLOP/s and refuses to print ratios when PyTorch's is below 100 (a reference
BLAS), or below half of OpenBLAS's alone where one core of this machine
reaches less than 200, the engines' flush-to-zero settings and the load
average. Every engine gets THREADS threads: PyTorch's and ORT's workers run
with OPENBLAS_NUM_THREADS and OMP_NUM_THREADS set to it
(torch.set_num_threads does not reach OpenBLAS, whose GEMMs would
otherwise use every core). For
medium_gpt it also splits each step into time inside GEMM calls and
outside them (dtc: the --trace's blas events; PyTorch: torch.profiler's
self time of its matrix products) and times dtc's GEMM shapes on OpenBLAS
alone.

Then (--parts dtc-alone) dtc alone on medium_gpt, in interleaved blocks:
its step on THREADS and on 2 x THREADS threads, and on dp=2 (two ranks
under mpirun, each of THREADS threads) with its collectives overlapped
with the compute and with each completed where it starts (dtc-run
--no-overlap), with each run's exposed communication per step (the
metrics' exposed_comm_seconds, the mean over the ranks).
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

LR, BETAS, EPS, DECAY = 1e-3, (0.9, 0.95), 1e-8, 0.1
ORT_VERSION = "1.19.2"


# ---------------------------------------------------------------- workers
# Each runs in a process of its own and prints one JSON line.

def worker_torch(model_name, steps, threads, profile):
    import torch
    import step_models
    torch.set_num_threads(threads)
    model = step_models.build(model_name).train()
    ids, labels = step_models.batch(model_name)
    vocab = step_models.CONFIGS[model_name]["vocab"]
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=BETAS, eps=EPS,
                            weight_decay=DECAY)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(ids)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), labels.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()

    losses, times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - start)
    result = {"losses": losses, "times": times}
    if profile:
        from torch.profiler import ProfilerActivity, profile as torch_profile
        with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
            start = time.perf_counter()
            for _ in range(profile):
                step()
            whole = time.perf_counter() - start
        gemm_ops = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm"}
        gemm = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key in gemm_ops)
        result["gemm_s"] = gemm / 1e6 / profile
        result["profiled_step_s"] = whole / profile
    a = torch.randn(1024, 1024)
    b = torch.randn(1024, 1024)
    result["gemm_gflops"] = best_gflops(lambda: torch.mm(a, b), 1024, 1024, 1024)
    result["flush_to_zero"] = "off (PyTorch's default)"
    print(json.dumps(result))


def ort_artifacts(model_name, work):
    """ORT's training, eval and optimizer models and checkpoint, in
    work/ort (made once)."""
    import onnx
    from onnx import helper, numpy_helper
    import numpy as np
    from onnxruntime.training import artifacts
    import onnxruntime.training.onnxblock as onnxblock
    import step_models
    out = os.path.join(work, "ort")
    if os.path.exists(os.path.join(out, "optimizer_model.onnx")):
        return out
    model = onnx.load(os.path.join(work, "model.onnx"))
    graph = model.graph
    vocab = step_models.CONFIGS[model_name]["vocab"]
    # ORT's cross-entropy takes [N, C] logits: flatten [B, T, V] first.
    graph.initializer.append(numpy_helper.from_array(
        np.array([-1, vocab], dtype=np.int64), "bench_flat_shape"))
    graph.node.append(helper.make_node("Reshape", ["logits", "bench_flat_shape"],
                                       ["logits_flat"], name="bench_flatten"))
    graph.output[0].CopyFrom(helper.make_tensor_value_info(
        "logits_flat", onnx.TensorProto.FLOAT, [None, vocab]))
    # Its gradient builder needs LayerNorm's optional outputs named.
    for node in graph.node:
        if node.op_type == "LayerNormalization":
            while len(node.output) < 3:
                node.output.append("%s_saved_%d" % (node.name, len(node.output)))
    trainable = {name for name, _ in step_models.build(model_name).named_parameters()}
    names = [i.name for i in graph.initializer]
    requires_grad = [n for n in names if n in trainable]
    missing = trainable - set(requires_grad)
    if missing:
        sys.exit("the export lacks parameters %s" % sorted(missing))
    frozen = [n for n in names if n not in trainable]
    os.makedirs(out, exist_ok=True)
    artifacts.generate_artifacts(
        model, requires_grad=requires_grad, frozen_params=frozen,
        loss=artifacts.LossType.CrossEntropyLoss,
        optimizer=onnxblock.optim.AdamW(betas=BETAS, eps=EPS, weight_decay=DECAY),
        artifact_directory=out)
    # The generator writes adam_mode=1 (Hugging Face's AdamW); PyTorch's
    # torch.optim.AdamW is adam_mode=0.
    path = os.path.join(out, "optimizer_model.onnx")
    optimizer = onnx.load(path)
    for node in optimizer.graph.node:
        for attr in node.attribute:
            if attr.name == "adam_mode":
                attr.i = 0
    onnx.save(optimizer, path)
    return out


def worker_ort(model_name, work, steps, threads):
    import numpy as np
    import onnxruntime as ort
    from onnxruntime.training.api import CheckpointState, Module, Optimizer
    out = ort_artifacts(model_name, work)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    state = CheckpointState.load_checkpoint(os.path.join(out, "checkpoint"))
    module = Module(os.path.join(out, "training_model.onnx"), state,
                    os.path.join(out, "eval_model.onnx"), device="cpu",
                    session_options=options)
    optimizer = Optimizer(os.path.join(out, "optimizer_model.onnx"), module)
    optimizer.set_learning_rate(LR)
    module.train()
    ids = np.load(os.path.join(work, "task", "ids.npy"))
    labels = np.load(os.path.join(work, "task", "labels.npy")).reshape(-1)
    losses, times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        loss = module(ids, labels)
        optimizer.step()
        module.lazy_reset_grad()
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
    # ORT's own GEMM (MLAS) on 1024^3, one session of one MatMul.
    import onnx
    from onnx import helper
    matmul = helper.make_model(helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "mm",
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [1024, 1024]) for n in "ab"],
        [helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, [1024, 1024])]),
        opset_imports=[helper.make_opsetid("", 17)])
    session = ort.InferenceSession(matmul.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    a = np.random.rand(1024, 1024).astype(np.float32)
    b = np.random.rand(1024, 1024).astype(np.float32)
    gflops = best_gflops(lambda: session.run(None, {"a": a, "b": b}), 1024, 1024, 1024)
    print(json.dumps({"losses": losses, "times": times, "gemm_gflops": gflops,
                      "flush_to_zero": "off (session.set_denormal_as_zero unset)"}))


def best_gflops(call, m, n, k, repeats=5):
    call()
    best = min(timed(call) for _ in range(repeats))
    return 2.0 * m * n * k / best / 1e9


def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


# ---------------------------------------------------------------- dtc side

def openblas(tools, threads):
    """The OpenBLAS dtc-launch links, with `threads` threads."""
    ldd = subprocess.run(["ldd", os.path.join(tools, "dtc-launch")], capture_output=True,
                         text=True, check=True).stdout
    match = re.search(r"(\S*libopenblas\S*) => (\S+)", ldd)
    if not match:
        sys.exit("dtc-launch does not link OpenBLAS:\n" + ldd)
    lib = ctypes.CDLL(match.group(2))
    lib.openblas_set_num_threads(threads)
    lib.cblas_sgemm.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_int,
                                                      ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                                                      ctypes.c_void_p, ctypes.c_int]
    return match.group(2), lib


def sgemm_seconds(lib, ta, tb, m, n, k, batch, repeats=5):
    """OpenBLAS alone: `batch` products of m x k by k x n, best of repeats."""
    import numpy as np
    a = np.random.rand(batch, m * k).astype(np.float32) * 0.02
    b = np.random.rand(batch, k * n).astype(np.float32) * 0.02
    c = np.zeros((batch, m * n), dtype=np.float32)
    row_major, no_trans, trans = 101, 111, 112

    def run():
        for i in range(batch):
            lib.cblas_sgemm(row_major, trans if ta else no_trans, trans if tb else no_trans,
                            m, n, k, 1.0, a[i].ctypes.data, m if ta else k,
                            b[i].ctypes.data, k if tb else n, 0.0, c[i].ctypes.data, n)
    run()
    return min(timed(run) for _ in range(repeats))


def program_gemms(out):
    """(ta, tb, m, n, k, calls) of each gemm thunk of OUT/program.txt, as
    dtc-launch calls it (a batch of lhs matrices times one rhs: one call
    of their stacked rows)."""
    gemms = []
    with open(os.path.join(out, "program.txt")) as f:
        for line in f:
            if not line.startswith("gemm "):
                continue
            fields = dict(kv.split("=", 1) for kv in line.split()[1:])
            shapes = [[int(x) for x in fields[key].split(":")[2].split("x")]
                      for key in ("lhs", "rhs", "out")]
            ta, tb = fields["ta"] == "1", fields["tb"] == "1"
            lhs, rhs, res = shapes
            m, n = res[-2], res[-1]
            k = lhs[-2] if ta else lhs[-1]
            calls = 1
            for d in res[:-2]:
                calls *= d
            if not ta and len(rhs) == 2 and len(lhs) == len(res) and calls > 1:
                m, calls = m * calls, 1
            gemms.append((ta, tb, m, n, k, calls))
    return gemms


def run_dtc(tools, out, work, steps, threads, trace=None, ranks=1, extra=()):
    """dtc's step times (and each step's exposed communication, the mean
    over the ranks, on a mesh of `ranks`)."""
    metrics = os.path.join(work, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    command = [os.path.join(tools, "dtc-run"), out, "--batch", os.path.join(work, "task"),
               "--steps", str(steps), "--threads", str(threads), "--metrics", metrics,
               "--log-every", str(steps)] + list(extra)
    if trace:
        command += ["--trace", trace]
    env = dict(os.environ)
    if ranks > 1:
        command = ["mpirun", "--oversubscribe", "-np", str(ranks)] + command
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    losses, times, exposed = [], [], []
    with open(metrics) as f:
        for line in f:
            record = json.loads(line)
            losses.append(record["loss"])
            times.append(record["step_seconds"])
            if "exposed_comm_seconds" in record:
                exposed.append(statistics.mean(record["exposed_comm_seconds"]))
    return {"losses": losses, "times": times, "exposed": exposed}


def trace_blas_seconds(trace, steps):
    with open(trace) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    return sum(e["dur"] for e in events if e.get("cat") == "blas" and e.get("ph") == "X") \
        / 1e6 / steps


# ---------------------------------------------------------------- driver

def ensure_ort_venv(venv):
    python = os.path.join(venv, "bin", "python")
    probe = [python, "-c", "import onnxruntime.training"]
    if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print("installing onnxruntime-training-cpu==%s into %s" % (ORT_VERSION, venv), flush=True)
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q",
                    "onnxruntime-training-cpu==%s" % ORT_VERSION], check=True)
    return python


def worker(python, args, threads):
    # torch.set_num_threads does not reach OpenBLAS, whose GEMMs would
    # otherwise use every core: its own variable does.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    result = subprocess.run([python, os.path.abspath(__file__)] + args, capture_output=True,
                            text=True, env=env)
    if result.returncode != 0:
        sys.exit("worker %s failed:\n%s" % (" ".join(args), result.stderr[-3000:]))
    return json.loads(result.stdout.strip().splitlines()[-1])


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny_gpt,tiny_llama,medium_gpt")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--parts", default="peers,dtc-alone",
                        help="peers: dtc against PyTorch and ORT on every model; dtc-alone: "
                             "dtc on medium_gpt with THREADS and 2 x THREADS threads, and on "
                             "dp=2 with and without overlap")
    parser.add_argument("--tools", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--ort-venv", default=os.path.expanduser("~/.cache/dtc-bench/ort-venv"))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--profile", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker == "torch":
        return worker_torch(args.models, args.steps, args.threads, args.profile)
    if args.worker == "ort":
        return worker_ort(args.models, args.work, args.steps, args.threads)

    parts = set(args.parts.split(","))
    if parts - {"peers", "dtc-alone"}:
        sys.exit("unknown --parts %s (peers, dtc-alone)" % ",".join(parts - {"peers", "dtc-alone"}))
    ort_python = ensure_ort_venv(args.ort_venv) if "peers" in parts else None
    blas_path, blas = openblas(args.tools, args.threads)
    print("load average %.2f %.2f %.2f; %d threads per engine; OPENBLAS_CORETYPE=%s"
          % (os.getloadavg() + (args.threads, os.environ.get("OPENBLAS_CORETYPE", "(unset)"))))
    dtc_gflops = 2.0 * 1024 ** 3 / sgemm_seconds(blas, False, False, 1024, 1024, 1024, 1) / 1e9
    print("dtc: OpenBLAS %s, 1024^3 GEMM %.0f GFLOP/s; flush-to-zero off (dtc-launch leaves "
          "MXCSR as the C runtime sets it)" % (blas_path, dtc_gflops))
    total = args.warmup + args.steps
    # A reference BLAS runs near 3.5 GFLOP/s: PyTorch must reach 100, or
    # half of what OpenBLAS alone reaches here where one core does less.
    floor = min(100.0, 0.5 * dtc_gflops)
    for name in args.models.split(",") if "peers" in parts else []:
        work = tempfile.mkdtemp(prefix="dtc-bench-%s-" % name)
        try:
            bench_model(name, work, args, ort_python, blas, total, floor)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if "dtc-alone" in parts:
        work = tempfile.mkdtemp(prefix="dtc-bench-alone-")
        try:
            bench_dtc_alone("medium_gpt", work, args, total)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def bench_model(name, work, args, ort_python, blas, total, floor):
    import step_models
    print("\n== %s (%d parameters)" % (name, step_models.parameter_count(name)), flush=True)
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "step_models.py"), name,
                    work], check=True, capture_output=True)
    out = os.path.join(work, "dtc")
    subprocess.run([os.path.join(args.tools, "dtc-compile"), os.path.join(work, "model.onnx"),
                    "-o", out, "--optimizer", "adamw", "--lr", str(LR), "--beta1",
                    str(BETAS[0]), "--beta2", str(BETAS[1]), "--eps", str(EPS),
                    "--weight-decay", str(DECAY)], check=True, capture_output=True)
    common = ["--models", name, "--threads", str(args.threads), "--work", work]
    engines = {
        "dtc": lambda steps: run_dtc(args.tools, out, work, steps, args.threads),
        "pytorch": lambda steps: worker("/usr/bin/python3",
                                        ["--worker", "torch", "--steps", str(steps)] + common,
                                        args.threads),
        "ort": lambda steps: worker(ort_python, ["--worker", "ort", "--steps", str(steps)]
                                    + common, args.threads),
    }
    first = {engine: run(3) for engine, run in engines.items()}
    for engine in ("pytorch", "ort"):
        worst = max(relative(a, b) for a, b in zip(first[engine]["losses"], first["dtc"]["losses"]))
        print("%-8s first losses %s (largest difference from dtc's: %.1e relative)"
              % (engine, " ".join("%.7f" % x for x in first[engine]["losses"]), worst))
        if worst > 1e-5:
            sys.exit("%s's losses differ from dtc's (%s): not the same training step"
                     % (engine, " ".join("%.7f" % x for x in first["dtc"]["losses"])))
    print("dtc      first losses %s" % " ".join("%.7f" % x for x in first["dtc"]["losses"]))
    torch_gflops, ort_gflops = first["pytorch"]["gemm_gflops"], first["ort"]["gemm_gflops"]
    print("1024^3 GEMM: PyTorch %.0f GFLOP/s, ORT %.0f GFLOP/s; flush-to-zero: PyTorch %s, ORT %s"
          % (torch_gflops, ort_gflops, first["pytorch"]["flush_to_zero"],
             first["ort"]["flush_to_zero"]))

    medians = {engine: [] for engine in engines}
    for block in range(args.blocks):
        for engine, run in engines.items():
            times = run(total)["times"][args.warmup:]
            medians[engine].append(statistics.median(times))
        print("block %d: %s (load %.2f)" % (block + 1, ", ".join(
            "%s %.2f ms" % (e, 1e3 * medians[e][-1]) for e in engines), os.getloadavg()[0]),
            flush=True)
    step = {engine: statistics.median(m) for engine, m in medians.items()}
    print("step (median of %d blocks of %d steps): %s" % (args.blocks, args.steps, ", ".join(
        "%s %.2f ms" % (e, 1e3 * t) for e, t in step.items())))
    if torch_gflops < floor:
        print("PyTorch's GEMM runs at %.0f GFLOP/s (< %.0f: a reference BLAS?): no ratios"
              % (torch_gflops, floor))
    else:
        for peer in ("ort", "pytorch"):
            ratios = [p / d for p, d in zip(medians[peer], medians["dtc"])]
            print("dtc is %.2fx as fast as %s (median of the blocks' ratios)"
                  % (statistics.median(ratios), peer))
    if name == "medium_gpt":
        split_medium(name, work, out, args, blas, total, step["pytorch"])


def bench_dtc_alone(name, work, args, total):
    """dtc's step on THREADS and 2 x THREADS threads, and on dp=2 with its
    collectives overlapped and not: interleaved blocks, medians."""
    import step_models
    print("\n== %s, dtc alone (%d parameters)" % (name, step_models.parameter_count(name)),
          flush=True)
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "step_models.py"), name,
                    work], check=True, capture_output=True)
    compiled = {}
    for mesh in ("", "dp=2"):
        out = os.path.join(work, "dtc" + mesh.replace("=", ""))
        subprocess.run([os.path.join(args.tools, "dtc-compile"), os.path.join(work, "model.onnx"),
                        "-o", out, "--optimizer", "adamw", "--lr", str(LR), "--beta1",
                        str(BETAS[0]), "--beta2", str(BETAS[1]), "--eps", str(EPS),
                        "--weight-decay", str(DECAY)] + (["--mesh", mesh] if mesh else []),
                       check=True, capture_output=True)
        compiled[mesh] = out
    more = 2 * args.threads
    runs = {
        "%d thread(s)" % args.threads:
            lambda: run_dtc(args.tools, compiled[""], work, total, args.threads),
        "%d threads" % more: lambda: run_dtc(args.tools, compiled[""], work, total, more),
        "dp=2 overlapped": lambda: run_dtc(args.tools, compiled["dp=2"], work, total,
                                           args.threads, ranks=2),
        "dp=2 not overlapped": lambda: run_dtc(args.tools, compiled["dp=2"], work, total,
                                               args.threads, ranks=2, extra=["--no-overlap"]),
    }
    step = {run: [] for run in runs}
    exposed = {run: [] for run in runs}
    for block in range(args.blocks):
        for run, go in runs.items():
            result = go()
            step[run].append(statistics.median(result["times"][args.warmup:]))
            if result["exposed"]:
                exposed[run].append(statistics.median(result["exposed"][args.warmup:]))
        print("block %d: %s (load %.2f)" % (block + 1, ", ".join(
            "%s %.1f ms%s" % (run, 1e3 * step[run][-1],
                              " (%.1f ms exposed)" % (1e3 * exposed[run][-1])
                              if exposed[run] else "") for run in runs),
            os.getloadavg()[0]), flush=True)
    names = list(runs)
    scaling = [a / b for a, b in zip(step[names[0]], step[names[1]])]
    print("%s: step %.1f ms on %s, %.1f ms on %s: %.2fx (median of the blocks' ratios)"
          % (name, 1e3 * statistics.median(step[names[0]]), names[0],
             1e3 * statistics.median(step[names[1]]), names[1], statistics.median(scaling)))
    hidden = [a / b for a, b in zip(exposed[names[2]], exposed[names[3]])]
    print("%s on dp=2 (%d ranks of %d thread(s)): step %.1f ms overlapped, %.1f ms not; exposed "
          "communication per step (mean over the ranks) %.1f ms overlapped, %.1f ms not: %.2f "
          "of it (median of the blocks' ratios)"
          % (name, 2, args.threads, 1e3 * statistics.median(step[names[2]]),
             1e3 * statistics.median(step[names[3]]), 1e3 * statistics.median(exposed[names[2]]),
             1e3 * statistics.median(exposed[names[3]]), statistics.median(hidden)))


def split_medium(name, work, out, args, blas, total, torch_step):
    """Time inside GEMM calls and outside them, per step, and dtc's GEMMs
    against OpenBLAS alone on the same shapes. PyTorch's time outside is
    its unprofiled step time less its GEMMs' profiled self time (the
    profiler slows the other ops more than the GEMMs)."""
    trace = os.path.join(work, "trace.json")
    dtc = run_dtc(args.tools, out, work, total, args.threads, trace)
    dtc_step = statistics.median(dtc["times"][args.warmup:])
    dtc_gemm = trace_blas_seconds(trace, total)
    torch = worker("/usr/bin/python3", ["--worker", "torch", "--steps", str(args.warmup),
                                        "--profile", "5", "--models", name,
                                        "--threads", str(args.threads)], args.threads)
    dtc_outside, torch_outside = dtc_step - dtc_gemm, torch_step - torch["gemm_s"]
    print("inside GEMMs / outside, per step: dtc %.1f / %.1f ms (trace); PyTorch %.1f / %.1f ms "
          "(torch.profiler's GEMM self time; its profiled step %.1f ms); dtc's outside is %.2f "
          "of PyTorch's" % (1e3 * dtc_gemm, 1e3 * dtc_outside, 1e3 * torch["gemm_s"],
                            1e3 * torch_outside, 1e3 * torch["profiled_step_s"],
                            dtc_outside / torch_outside))
    gemms = program_gemms(out)
    flops = sum(2.0 * m * n * k * calls for _, _, m, n, k, calls in gemms)
    alone = sum(sgemm_seconds(blas, ta, tb, m, n, k, calls, repeats=3)
                for ta, tb, m, n, k, calls in gemms)
    print("dtc's %d GEMMs: %.2f GFLOP a step, %.1f GFLOP/s in the step, OpenBLAS alone on the "
          "same shapes %.1f GFLOP/s (%.0f%%)" % (len(gemms), flops / 1e9, flops / dtc_gemm / 1e9,
                                                 flops / alone / 1e9, 100 * alone / dtc_gemm))


if __name__ == "__main__":
    main()

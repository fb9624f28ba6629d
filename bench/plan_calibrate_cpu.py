#!/usr/bin/env python3
"""Fits the planner's CPU device entry to measured steps of the compiled CPU
backend and checks its predictions on other meshes.

usage: bench/plan_calibrate_cpu.py [BUILD_BIN_DIR] [--write FILE]

1. Measures one core of this machine: an fp32 1024^3 GEMM on OpenBLAS
   (numpy, one thread) for the matmul peak, a 256 MiB copy for the memory
   bandwidth (each the best of 5).
2. Times the medium GPT of bench/step_models.py (d 512, 4 layers, sequence
   256, batch 4; fp32 AdamW), compiled by dtc-compile --target cpu, on one
   rank and on dp=2 and tp=2 (sequence parallel), one thread per rank under
   mpirun: the median of 12 steps after 3.
3. Writes a device entry "cpu-core" with the measured bandwidth and fits
   its matmul peak (bisection, from half to twice the measured GEMM's) so
   that dtc-plan --explain predicts the one-rank step; then predicts dp=2
   and tp=2 with it.
Prints the measured and predicted times and exits 1 unless both are within
20% (issue #21). --write FILE keeps the fitted device file.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# One thread, as each rank runs (set before numpy loads OpenBLAS).
os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
write = sys.argv[sys.argv.index("--write") + 1] if "--write" in sys.argv else None
tools = next((a for a in args if a != write), "build/bin")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def best(call, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_core():
    a = np.random.rand(1024, 1024).astype(np.float32)
    b = np.random.rand(1024, 1024).astype(np.float32)
    gemm = 2 * 1024 ** 3 / best(lambda: a @ b)
    x = np.ones(64 * 1024 * 1024, dtype=np.float32)
    y = np.empty_like(x)
    copy = 2 * x.nbytes / best(lambda: np.copyto(y, x))
    return gemm, copy


def device_file(path, gemm, bandwidth):
    # Vector peak: one AVX2 core's order of magnitude (elementwise kernels
    # are bound by memory here). Links: MPI over shared memory, with the
    # bandwidth of a copy and a few microseconds a message.
    peak = {"matmul": gemm, "vector": 24e9}
    link = {"latency_seconds": 5e-6, "bytes_per_second": bandwidth / 3}
    entry = {"name": "cpu-core", "description": "one core of the machine measured",
             "peak_flops": {k: peak for k in ("f64", "f32", "bf16", "f16", "i8")},
             "memory_bytes_per_second": bandwidth, "memory_bytes": 12e9,
             "usable_memory_bytes": 12e9, "matmul_efficiency": 1.0,
             "memory_efficiency": 1.0, "devices_per_node": 64,
             "intra_node": link, "inter_node": link}
    with open(path, "w") as f:
        json.dump({"devices": [entry]}, f, indent=2)


def predict(model, devices, mesh):
    out = os.path.join(os.path.dirname(devices), "plan.json")
    subprocess.run([os.path.join(tools, "dtc-plan"), model, "--device-file", devices,
                    "--gpu", "cpu-core", "--precision", "fp32", "--attention", "unfused",
                    "--explain", "--mesh", mesh, "--json", out],
                   check=True, capture_output=True)
    plan = json.load(open(out))["plans"][0]
    return plan["step_seconds"], plan["flags"]


def measure_step(model, work, flags, ranks):
    out = os.path.join(work, "out-" + str(abs(hash(flags))))
    subprocess.run([os.path.join(tools, "dtc-compile"), model, *flags.split(), "-o", out],
                   check=True, capture_output=True, env=ENV)
    metrics = os.path.join(work, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    subprocess.run(["mpirun", "--oversubscribe", "-np", str(ranks),
                    os.path.join(tools, "dtc-run"), out, "--batch", os.path.join(work, "task"),
                    "--steps", "15", "--threads", "1", "--metrics", metrics,
                    "--log-every", "15"], check=True, capture_output=True, env=ENV)
    times = [json.loads(line)["step_seconds"] for line in open(metrics)]
    return statistics.median(times[3:])


with tempfile.TemporaryDirectory() as work:
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "step_models.py"), "medium_gpt", work],
                   check=True, capture_output=True)
    model = os.path.join(work, "model.onnx")
    gemm, bandwidth = measure_core()
    print(f"one core: fp32 GEMM 1024^3 {gemm / 1e9:.1f} GFLOP/s, copy {bandwidth / 1e9:.1f} GB/s")
    devices = os.path.join(work, "devices.json")
    device_file(devices, gemm, bandwidth)
    measured = {}
    for mesh, ranks in (("dp=1", 1), ("dp=2", 2), ("tp=2", 2)):
        _, flags = predict(model, devices, mesh)
        flags = flags.replace("--shapes-only", "")
        measured[mesh] = measure_step(model, work, flags, ranks)
    low, high = gemm / 2, gemm * 2
    for _ in range(30):
        peak = (low + high) / 2
        device_file(devices, peak, bandwidth)
        if predict(model, devices, "dp=1")[0] > measured["dp=1"]:
            low = peak
        else:
            high = peak
    print(f"fitted matmul peak {peak / 1e9:.1f} GFLOP/s ({peak / gemm:.2f}x the GEMM's; "
          f"one rank: measured {measured['dp=1']:.3f} s a step)")
    failed = False
    for mesh in ("dp=2", "tp=2"):
        predicted = predict(model, devices, mesh)[0]
        error = predicted / measured[mesh] - 1
        failed |= abs(error) > 0.2
        print(f"{mesh}: measured {measured[mesh]:.3f} s, predicted {predicted:.3f} s "
              f"({100 * error:+.1f}%{'' if abs(error) <= 0.2 else ', beyond 20%'})")
    if write:
        with open(devices) as f, open(write, "w") as g:
            g.write(f.read())
    sys.exit(1 if failed else 0)

#!/usr/bin/env python3
"""Compile time and memory against model depth, tensor sizes and mesh size.

usage: bench/compile_scaling.py [BUILD_BIN_DIR] [--quick]   (default build/bin)

1. Depth: the Llama-shaped models of 4, 8, 16 and 32 layers in
   test/Import/ONNX/Inputs/scaling, `dtc-compile --shapes-only --mesh
   dp=2,tp=2 --sequence-parallel`: t(32)/t(16) at most 2.3, t(32) under 10 s.
2. Real sizes: Llama-3-shaped graphs written by bench/llama_shapes.py from
   published dimensions (8B, 70B, a 405B-like one; sequence 4096-8192, batch
   1-32; weights as absent external data), compiled shapes-only in bf16
   (`--precision bf16`, `--sequence-parallel` with tp, `--zero 1` with dp), each best
   of 5 runs, with its wall time and peak resident memory (the child's
   ru_maxrss). Checked: the 70B graph at batch 16 on dp=16,tp=8 under 5 s and
   2 GiB and within 1.5x of the same 80 layers at tiny dimensions (d 64,
   vocabulary 128, sequence 16); doubling the sequence or the batch changes
   the time by under 10% or 0.2 s, whichever is larger; dp=2,tp=8 and
   dp=16,tp=8 within 10%; doubling the layers (40 to 80) at most 2.1x;
   with pipeline stages, the 70B graph at batch 128 on pp=8,dp=16,tp=8
   (1,024 ranks, 8 microbatches) under 5 s and 2 GiB.
Exits 1 when a check fails. --quick runs each compile once.
"""
import os
import subprocess
import sys
import tempfile
import time

from scaling import run

HERE = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
tools = args[0] if args else "build/bin"
repeats = 1 if "--quick" in sys.argv else 5
compile_tool = os.path.join(tools, "dtc-compile")


def measure(command):
    """Best wall time (s) and largest peak RSS (bytes) of `command`."""
    best, rss = float("inf"), 0
    for _ in range(repeats):
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        stderr = child.stderr.read()
        child.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(command)} failed:\n{stderr}")
        best = min(best, elapsed)
        rss = max(rss, usage.ru_maxrss * 1024)
    return best, rss


print("== depth: Llama-shaped models, dp=2,tp=2 with sequence parallelism ==")
with tempfile.TemporaryDirectory() as out:
    depth_ok = run(lambda model: [compile_tool, "--shapes-only", "--mesh", "dp=2,tp=2",
                                  "--sequence-parallel", model, "-o", out],
                   limit_32=10, exit=False)

print("\n== real sizes: Llama-3-shaped graphs, shapes only, bf16 ==")
results = {}
with tempfile.TemporaryDirectory() as work:
    def compile_case(key, config, mesh, seq=4096, batch=16, layers=None, extra=()):
        model = os.path.join(work, f"{config}_{layers}_{seq}_{batch}.onnx")
        if not os.path.exists(model):
            command = [sys.executable, os.path.join(HERE, "llama_shapes.py"), config, model,
                       "--seq", str(seq), "--batch", str(batch)]
            if layers:
                command += ["--layers", str(layers)]
            subprocess.run(command, check=True)
        flags = ["--shapes-only", "--precision", "bf16"]
        if "tp=" in mesh:
            flags += ["--sequence-parallel"]
        if mesh:
            flags += ["--mesh", mesh]
        if "dp=" in mesh:
            flags += ["--zero", "1"]
        flags += list(extra)
        seconds, rss = measure([compile_tool, *flags, model, "-o", os.path.join(work, "out")])
        results[key] = seconds
        shape = f"{config}{f' {layers}L' if layers else ''} seq {seq} batch {batch}"
        print(f"{shape:34s} {mesh or 'one device':14s} {seconds:6.2f} s  "
              f"{rss / 2**30:5.2f} GiB peak RSS", flush=True)
        return seconds, rss

    compile_case("tiny", "tiny", "dp=16,tp=8", seq=16)
    headline = compile_case("70b", "llama3-70b", "dp=16,tp=8")
    compile_case("70b-seq", "llama3-70b", "dp=16,tp=8", seq=8192)
    compile_case("70b-batch", "llama3-70b", "dp=16,tp=8", batch=32)
    compile_case("70b-dp2", "llama3-70b", "dp=2,tp=8")
    compile_case("70b-40", "llama3-70b", "dp=16,tp=8", layers=40)
    compile_case("70b-tp8", "llama3-70b", "tp=8", batch=1)
    compile_case("8b-1", "llama3-8b", "", batch=1, seq=8192)
    compile_case("405b", "llama3-405b", "dp=16,tp=8")
    pipelined = compile_case("70b-pp8", "llama3-70b", "pp=8,dp=16,tp=8", batch=128,
                             extra=["--microbatches", "8"])

print("\n== checks ==")
checks = []


def check(name, value, limit, passed):
    checks.append(passed)
    print(f"{'ok  ' if passed else 'FAIL'} {name}: {value} (limit {limit})")


def growth(key):
    delta = results[key] - results["70b"]
    return delta, abs(delta) < max(0.10 * results["70b"], 0.2)


seconds, rss = headline
check("70B batch 16, dp=16,tp=8: wall time", f"{seconds:.2f} s", "5 s", seconds < 5)
check("70B batch 16, dp=16,tp=8: peak RSS", f"{rss / 2**30:.2f} GiB", "2 GiB", rss < 2 * 2**30)
seconds, rss = pipelined
check("70B batch 128, pp=8,dp=16,tp=8, 8 microbatches: wall time", f"{seconds:.2f} s", "5 s",
      seconds < 5)
check("70B batch 128, pp=8,dp=16,tp=8, 8 microbatches: peak RSS", f"{rss / 2**30:.2f} GiB",
      "2 GiB", rss < 2 * 2**30)
ratio = results["70b"] / results["tiny"]
check("70B / the same 80 layers at tiny dimensions", f"{ratio:.2f}x", "1.5x", ratio <= 1.5)
for key, what in (("70b-seq", "sequence 4096 -> 8192"), ("70b-batch", "batch 16 -> 32")):
    delta, ok = growth(key)
    check(what, f"{delta:+.2f} s ({delta / results['70b']:+.0%})", "10% or 0.2 s", ok)
spread = abs(results["70b"] - results["70b-dp2"]) / results["70b"]
check("dp=2,tp=8 vs dp=16,tp=8", f"{spread:.0%}", "10%", spread < 0.10)
layers = results["70b"] / results["70b-40"]
check("layers 40 -> 80", f"{layers:.2f}x", "2.1x", layers <= 2.1)
check("depth (4-32 layers)", "ok" if depth_ok else "failed", "t(32)/t(16) <= 2.3, t(32) < 10 s",
      depth_ok)
sys.exit(0 if all(checks) else 1)

#!/usr/bin/env python3
"""Compile time against model depth: the whole training pipeline
(import, loss, autodiff, data parallelism, AdamW, simplify) for a
data-parallel mesh of 2.

usage: bench/compile_scaling.py [BUILD_BIN_DIR]   (default build/bin)

Compiles the Llama-shaped models of 8, 16 and 32 layers in
test/Import/ONNX/Inputs/scaling with `dtc-compile --shapes-only --mesh dp=2`
(their weights are external data that does not exist, so every initializer,
the RoPE tables and the causal mask included, is a trained parameter here),
best of 5 runs each, and prints the times and t(32)/t(16), which should stay
near 2 (linear) and at most 2.3.
"""
import os
import subprocess
import sys
import tempfile
import time

tools = sys.argv[1] if len(sys.argv) > 1 else "build/bin"
models = "test/Import/ONNX/Inputs/scaling"
times = {}
with tempfile.TemporaryDirectory() as out:
    for layers in (8, 16, 32):
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([os.path.join(tools, "dtc-compile"), "--shapes-only", "--mesh", "dp=2",
                            os.path.join(models, f"llama_{layers}.onnx"), "-o", out],
                           check=True, stderr=subprocess.DEVNULL)
            best = min(best, time.perf_counter() - start)
        times[layers] = best
        print(f"{layers:3d} layers: {best * 1000:7.1f} ms")
ratio = times[32] / times[16]
print(f"t(32)/t(16) = {ratio:.2f} (limit 2.3)")
sys.exit(0 if ratio <= 2.3 else 1)

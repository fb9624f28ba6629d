#!/usr/bin/env python3
"""Import time against model depth, in shape-only mode.

usage: bench/import_scaling.py [BUILD_BIN_DIR]   (default build/bin)

Imports the Llama-shaped models of 8, 16 and 32 layers in
test/Import/ONNX/Inputs/scaling (weights in external data that does not
exist) with `dtc-translate --import-onnx --shapes-only`, best of 5 runs
each, and prints the times and t(32)/t(16), which should stay near 2
(linear) and at most 2.3.
"""
import os
import subprocess
import sys
import time

tools = sys.argv[1] if len(sys.argv) > 1 else "build/bin"
models = "test/Import/ONNX/Inputs/scaling"
times = {}
for layers in (8, 16, 32):
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([os.path.join(tools, "dtc-translate"), "--import-onnx", "--shapes-only",
                        os.path.join(models, f"llama_{layers}.onnx"), "-o", os.devnull], check=True)
        best = min(best, time.perf_counter() - start)
    times[layers] = best
    print(f"{layers:3d} layers: {best * 1000:7.1f} ms")
ratio = times[32] / times[16]
print(f"t(32)/t(16) = {ratio:.2f} (limit 2.3)")
sys.exit(0 if ratio <= 2.3 else 1)

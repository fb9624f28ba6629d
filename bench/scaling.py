"""Shared by the scaling benchmarks: time a tool on the Llama-shaped models
of 4, 8, 16 and 32 layers in test/Import/ONNX/Inputs/scaling."""
import os
import subprocess
import sys
import time

MODELS = "test/Import/ONNX/Inputs/scaling"


def run(command_for, limit_32=None, exit=True):
    """Runs command_for(model_path) five times per depth, prints the best
    time of each and t(32)/t(16); fails when that ratio exceeds 2.3, or
    the 32-layer time exceeds limit_32 seconds: exits 1 then (0 otherwise),
    or, with exit=False, returns whether it passed."""
    times = {}
    for layers in (4, 8, 16, 32):
        command = command_for(os.path.join(MODELS, f"llama_{layers}.onnx"))
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            result = subprocess.run(command, stderr=subprocess.PIPE, text=True)
            if result.returncode != 0:
                sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
            best = min(best, time.perf_counter() - start)
        times[layers] = best
        print(f"{layers:3d} layers: {best * 1000:7.1f} ms")
    ratio = times[32] / times[16]
    print(f"t(32)/t(16) = {ratio:.2f} (limit 2.3)")
    within = limit_32 is None or times[32] <= limit_32
    if limit_32 is not None:
        print(f"t(32) = {times[32]:.2f} s (limit {limit_32} s)")
    passed = ratio <= 2.3 and within
    if exit:
        sys.exit(0 if passed else 1)
    return passed

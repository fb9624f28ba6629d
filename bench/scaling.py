"""Shared by the scaling benchmarks: time a tool on the Llama-shaped models
of 8, 16 and 32 layers in test/Import/ONNX/Inputs/scaling."""
import os
import subprocess
import sys
import time

MODELS = "test/Import/ONNX/Inputs/scaling"


def run(command_for):
    """Runs command_for(model_path) five times per depth, prints the best
    time of each and t(32)/t(16); exits 1 when that ratio exceeds 2.3."""
    times = {}
    for layers in (8, 16, 32):
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
    sys.exit(0 if ratio <= 2.3 else 1)

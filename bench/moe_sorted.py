#!/usr/bin/env python3
"""A Mixtral-style mixture of experts on the CPU backend: every expert on
every (token, choice) row, masked (the loop form's exact bound, dtc's
default), against the rows sorted into buffers of a bound (dtc-compile
--expert-bound, dtc-sort-experts).

Run with Debian's Python (python3-torch exports the model) from the
repository root, after building:
  /usr/bin/python3 bench/moe_sorted.py [BUILD_BIN_DIR] [--steps 10] [--blocks 3]
The model is test/Integration/Inputs/moe/make_models.py's Mixtral block at
larger sizes: 2 layers, d 256, 8 experts of hidden 512, top-2, batch 8 x 128
tokens (2,048 routed rows a layer). The bound is 1.5 x the even share, 384
rows an expert (the exact one: 2,048). Each block runs both compiled steps
in fresh processes, --steps steps each; a figure is the median step time of
a run, and the printed one the median over the blocks. The losses of the
two must agree (1e-4 relative): the bound drops nothing here (dtc-run stops
otherwise). Also printed: the report's FLOPs per step and the sorted
buffers' padded against routed bytes.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "Integration", "Inputs", "moe"))
sys.path.insert(0, os.path.join(ROOT, "test", "Integration", "Inputs"))
import make_models as moe  # noqa: E402

args = [a for i, a in enumerate(sys.argv[1:], 1)
        if not a.startswith("--") and not sys.argv[i - 1].startswith("--")]
tools = args[0] if args else "build/bin"


def option(name, default):
    flag = f"--{name}"
    return int(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default


STEPS, BLOCKS = option("steps", 10), option("blocks", 3)
moe.VOCAB, moe.DIM, moe.HEADS, moe.SEQ, moe.BATCH = 512, 256, 8, 128, 8
moe.EXPERTS, moe.TOP_K, moe.HIDDEN = 8, 2, 512
BOUND = moe.BATCH * moe.SEQ * moe.TOP_K * 3 // (2 * moe.EXPERTS)


def export(work):
    torch.manual_seed(1)
    ids = torch.randint(0, moe.VOCAB, (moe.BATCH, moe.SEQ))
    labels = torch.roll(ids, -1, dims=1)
    os.makedirs(os.path.join(work, "batch"))
    np.save(os.path.join(work, "batch", "ids.npy"), ids.numpy())
    np.save(os.path.join(work, "batch", "labels.npy"), labels.numpy())
    model = moe.build(moe.MixtralMoE).eval()
    path = os.path.join(work, "model.onnx")
    torch.onnx.export(model, (ids,), path, input_names=["ids"], output_names=["logits"],
                      opset_version=17, do_constant_folding=False)
    return path


def compile_step(model, out, extra):
    subprocess.run([os.path.join(tools, "dtc-compile"), model, "-o", out, "--lr", "1e-3"]
                   + extra, check=True, capture_output=True, text=True)
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


def run(out, work):
    metrics = os.path.join(work, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    subprocess.run([os.path.join(tools, "dtc-run"), out, "--batch", os.path.join(work, "batch"),
                    "--steps", str(STEPS), "--metrics", metrics, "--log-every", str(STEPS)],
                   check=True, capture_output=True, text=True)
    with open(metrics) as f:
        records = [json.loads(line) for line in f]
    return [r["loss"] for r in records], statistics.median(r["step_seconds"] for r in records[1:])


def main():
    with tempfile.TemporaryDirectory() as work:
        model = export(work)
        forms = {"every row, masked": [], f"sorted, bound {BOUND}": ["--expert-bound", str(BOUND)]}
        reports, times, losses = {}, {name: [] for name in forms}, {}
        for name, extra in forms.items():
            reports[name] = compile_step(model, os.path.join(work, name.split(",")[0]), extra)
        for _ in range(BLOCKS):
            for name in forms:
                losses[name], seconds = run(os.path.join(work, name.split(",")[0]), work)
                times[name].append(seconds)
        base = None
        for name in forms:
            median = statistics.median(times[name])
            base = base or median
            flops = reports[name]["flops_per_step"]
            flops = flops["total"] if isinstance(flops, dict) else flops
            print(f"{name:22s} {1e3 * median:8.1f} ms/step  {base / median:5.2f}x  "
                  f"{flops / 1e9:7.2f} GFLOP/step")
        buffers = reports[f"sorted, bound {BOUND}"]["expert_buffers"]
        print(f"sorted buffers: {buffers['buffer_rows']} rows for {buffers['routed_rows']} "
              f"routed; {buffers['padded_bytes']} B gathered, {buffers['useful_bytes']} B routed")
        first, second = losses.values()
        worst = max(abs(a - b) / abs(b) for a, b in zip(first, second))
        print(f"losses agree within {worst:.1e} (relative) over {STEPS} steps")
        return 0 if worst < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Times a compiled CPU step on 1 and 2 threads per rank (dtc-launch
--threads), split into its kernels and its GEMMs.

Run with Debian's Python (python3-torch 1.13, python3-onnx) from the
repository root, after building:  /usr/bin/python3 bench/kernel_threads.py
The model is examples/tiny_transformer's with medium sizes (one block, d 256,
8 heads, sequence 128, vocabulary 4096, batch 4), exported into a temporary
directory. Each block of runs trains STEPS steps on 1 then 2 threads with
--trace; the figures are medians over BLOCKS blocks of the traces' sums per
step (kernels, GEMMs, the step), so a busy moment of the machine moves one
block, not the result. The two runs' losses must be bit-identical.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from generators import run_generator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_model(directory):
    run_generator(os.path.join(ROOT, "examples/tiny_transformer/make_model.py"), directory,
                  VOCAB=4096, DIM=256, HEADS=8, SEQ=128, BATCH=4)


def per_step(trace_path, steps):
    with open(trace_path) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    sums = {"kernel": 0.0, "blas": 0.0}
    total = 0.0
    for e in events:
        if e.get("ph") != "X":
            continue
        total += e["dur"]
        if e.get("cat") in sums:
            sums[e["cat"]] += e["dur"]
    return sums["kernel"] / steps / 1000, sums["blas"] / steps / 1000, total / steps / 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default=os.path.join(ROOT, "build/bin"))
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--blocks", type=int, default=5)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="dtc-threads-")
    make_model(work)
    out = os.path.join(work, "out")
    subprocess.run([os.path.join(args.tools, "dtc-compile"), os.path.join(work, "model.onnx"),
                    "-o", out, "--lr", "1e-3"], check=True, stderr=subprocess.DEVNULL)
    results = {1: [], 2: []}
    for block in range(args.blocks):
        for threads in (1, 2):
            trace = os.path.join(work, f"trace{threads}.json")
            dump = os.path.join(work, f"dump{threads}")
            subprocess.run([os.path.join(args.tools, "dtc-run"), out, "--batch",
                            os.path.join(work, "task"), "--steps", str(args.steps),
                            "--threads", str(threads), "--trace", trace, "--dump", dump],
                           check=True, stdout=subprocess.DEVNULL)
            results[threads].append(per_step(trace, args.steps))
        with open(os.path.join(work, "dump1/loss.npy"), "rb") as a, \
                open(os.path.join(work, "dump2/loss.npy"), "rb") as b:
            if a.read() != b.read():
                sys.exit("error: the losses on 1 and 2 threads differ")
    print(f"medium GPT (d 256, seq 128, vocab 4096, batch 4), {args.steps} steps x "
          f"{args.blocks} blocks, medians of the trace sums, ms per step:")
    print(f"{'threads':>8} {'kernels':>9} {'GEMMs':>9} {'step':>9}")
    medians = {}
    for threads, rows in results.items():
        medians[threads] = [statistics.median(column) for column in zip(*rows)]
        print(f"{threads:>8} " + " ".join(f"{v:9.1f}" for v in medians[threads]))
    print("speed-up on 2 threads: kernels {:.2f}x, GEMMs {:.2f}x, step {:.2f}x; "
          "losses bit-identical".format(*(a / b for a, b in zip(medians[1], medians[2]))))


if __name__ == "__main__":
    main()

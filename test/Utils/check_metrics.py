#!/usr/bin/env python3
"""check_metrics.py METRICS DUMP --ranks N [--flops REPORT [--peak-tflops T]]

Checks a --metrics file of a run that also wrote --dump DUMP: one JSON line
per step, the losses of DUMP/loss.npy, the last step's gradient norm equal
to the norm of the whole gradients in DUMP/grad/ (numpy's, not dtc's), one
peak per rank, and (--flops) throughput figures: FLOP/s times the step
time is the FLOPs of every rank by dtc-compile's REPORT (its per-rank
total times the ranks; with pp, each pp rank's in pp_ranks, times dp),
and the MFU that over the ranks' peak.
Prints "metrics ok".
"""
import argparse
import glob
import json
import math
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("metrics")
    parser.add_argument("dump")
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--flops", metavar="REPORT")
    parser.add_argument("--peak-tflops", type=float)
    args = parser.parse_args()
    lines = [json.loads(line) for line in open(args.metrics)]
    step_flops = None
    if args.flops:
        report = json.load(open(args.flops))
        if "pp_ranks" in report:
            pp = len(report["pp_ranks"])
            step_flops = (sum(r["flops"] for r in report["pp_ranks"]) *
                          args.ranks // pp)
        else:
            step_flops = report["flops_per_step"]["total"] * args.ranks
    losses = np.load(f"{args.dump}/loss.npy")
    problems = []
    if [line["step"] for line in lines] != list(range(1, len(losses) + 1)):
        problems.append(f"steps {[line['step'] for line in lines]}, "
                        f"expected 1..{len(losses)}")
    for line, loss in zip(lines, losses):
        if not math.isclose(line["loss"], float(loss), rel_tol=1e-6):
            problems.append(f"step {line['step']}: loss {line['loss']} but "
                            f"loss.npy has {loss}")
        if len(line["peak_intermediate_bytes"]) != args.ranks:
            problems.append(f"step {line['step']}: "
                            f"{len(line['peak_intermediate_bytes'])} peaks")
        needed = ["lr", "step_seconds", "tokens_per_second", "grad_norm"]
        if args.flops:
            needed += ["flops_per_second"]
        if args.peak_tflops:
            needed += ["mfu"]
        problems += [f"step {line['step']}: no {key}" for key in needed
                     if key not in line or not line[key] > 0]
        if step_flops and "flops_per_second" in line:
            flops = line["flops_per_second"] * line["step_seconds"]
            if not math.isclose(flops, step_flops, rel_tol=1e-4):
                problems.append(f"step {line['step']}: {flops:.6g} FLOPs "
                                f"(FLOP/s x seconds), the report's "
                                f"{step_flops:.6g}")
        if args.peak_tflops and "mfu" in line:
            mfu = line["flops_per_second"] / (args.peak_tflops * 1e12 *
                                              args.ranks)
            if not math.isclose(line["mfu"], mfu, rel_tol=1e-4):
                problems.append(f"step {line['step']}: MFU {line['mfu']}, "
                                f"FLOP/s over the peak {mfu:.6g}")
    squares = sum(float(np.sum(np.load(path).astype(np.float64) ** 2))
                  for path in glob.glob(f"{args.dump}/grad/*.npy"))
    norm = math.sqrt(squares)
    if not math.isclose(lines[-1]["grad_norm"], norm, rel_tol=1e-5):
        problems.append(f"last grad_norm {lines[-1]['grad_norm']}, numpy's "
                        f"norm of the dumped gradients {norm}")
    for problem in problems:
        print("check_metrics.py:", problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print("metrics ok")


if __name__ == "__main__":
    main()

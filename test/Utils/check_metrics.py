#!/usr/bin/env python3
"""check_metrics.py METRICS DUMP --ranks N [--flops]

Checks a --metrics file of a run that also wrote --dump DUMP: one JSON line
per step, the losses of DUMP/loss.npy, the last step's gradient norm equal
to the norm of the whole gradients in DUMP/grad/ (numpy's, not dtc's), one
peak per rank, and (--flops) throughput figures. Prints "metrics ok".
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
    parser.add_argument("--flops", action="store_true")
    args = parser.parse_args()
    lines = [json.loads(line) for line in open(args.metrics)]
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
            needed += ["flops_per_second", "mfu"]
        problems += [f"step {line['step']}: no {key}" for key in needed
                     if key not in line or not line[key] > 0]
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

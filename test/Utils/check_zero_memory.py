#!/usr/bin/env python3
"""Checks the persistent bytes per rank in OUT/report.json against the ZeRO
paper's formulas, with Psi counted from PyTorch's parameters.

usage: check_zero_memory.py OUT/report.json INITIAL_PARAMS_DIR --dp N
                            [--stage S] [--precision fp32|bf16]

Psi is the number of elements of INITIAL_PARAMS_DIR/*.npy (the model's
named_parameters, as make_training_reference.py saves them). A parameter is
split over dp along its first dimension dp divides, or, when dp divides
none, padded along its first dimension to a multiple of dp; Psi' counts the
padded elements and is what every split term uses. With AdamW (8 bytes of
step counter in the optimizer state), per rank:

  fp32: parameters 4Psi, gradients 4Psi, optimizer state 8Psi + 8;
  bf16: parameters 2Psi, gradients 2Psi, master weights 4Psi, optimizer
        state 8Psi + 8;
  stage 1 splits master weights and optimizer state (the gradient buffer
  stays whole, padded); stage 2 also the gradients; stage 3 also the
  parameters.

Prints one line per category and exits 1 if any differs.
"""
import argparse
import glob
import json
import sys

import numpy as np


def padded_size(shape, dp):
    if any(d % dp == 0 for d in shape) or not shape:
        return int(np.prod(shape))
    rows = -(-shape[0] // dp) * dp
    return int(rows * np.prod(shape[1:]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("initial")
    parser.add_argument("--dp", type=int, required=True)
    parser.add_argument("--stage", type=int, default=0)
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    args = parser.parse_args()
    shapes = [np.load(path, mmap_mode="r").shape
              for path in sorted(glob.glob(f"{args.initial}/*.npy"))]
    psi = sum(int(np.prod(s)) for s in shapes)
    padded = sum(padded_size(s, args.dp) for s in shapes)
    n, stage = args.dp, args.stage
    low = 2 if args.precision == "bf16" else 4

    def split(bytes_per_element, from_stage):
        if stage >= from_stage:
            return bytes_per_element * padded // n
        return bytes_per_element * psi

    expected = {
        "parameters": split(low, 3),
        # Stage 1's whole gradient buffer holds the padded gradients.
        "gradients": split(low, 2) if stage != 1 else low * padded,
        "master_weights": split(4, 1) if args.precision == "bf16" else 0,
        "optimizer_state": split(8, 1) + 8,
    }
    with open(args.report) as f:
        memory = json.load(f)["memory_bytes_per_rank"]
    failed = 0
    for key, want in expected.items():
        got = memory.get(key)
        ok = got == want
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {key}: report {got}, formula {want} "
              f"(Psi {psi}, padded {padded}, N {n}, stage {stage}, {args.precision})")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

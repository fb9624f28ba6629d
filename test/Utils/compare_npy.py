#!/usr/bin/env python3
"""compare_npy.py ACTUAL.npy EXPECTED.npy [--rtol R] [--atol A] [--rel-l2 E]

Exits 0 when the arrays have the same shape and are close (integers and
booleans: equal; with --rel-l2, also ||actual - expected|| / ||expected||
<= E), else prints the largest difference and exits 1.
"""
import argparse
import sys

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("actual")
parser.add_argument("expected")
parser.add_argument("--rtol", type=float, default=1e-5)
parser.add_argument("--atol", type=float, default=1e-6)
parser.add_argument("--rel-l2", type=float, default=None)
args = parser.parse_args()
actual, expected = np.load(args.actual), np.load(args.expected)
if actual.shape != expected.shape:
    sys.exit(f"shape {actual.shape} != expected {expected.shape}")
if expected.dtype.kind in "biu":
    ok = np.array_equal(actual, expected)
else:
    ok = np.allclose(actual, expected, rtol=args.rtol, atol=args.atol, equal_nan=True)
diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
worst = np.nanmax(diff) if diff.size else 0.0
norm = np.linalg.norm(expected.astype(np.float64))
rel_l2 = np.linalg.norm(diff) / (norm if norm > 0 else 1.0)
if args.rel_l2 is not None and not rel_l2 <= args.rel_l2:
    ok = False
if not ok:
    sys.exit(f"arrays differ: max abs difference {worst:.3g}, relative L2 {rel_l2:.3g}")
print(f"match: {actual.size} values within rtol {args.rtol:g}, atol {args.atol:g} "
      f"(max abs difference {worst:.3g}, relative L2 {rel_l2:.3g})")

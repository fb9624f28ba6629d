#!/usr/bin/env python3
"""compare_dumps.py A B

Checks that two runs' dumps (dtc-run --dump) are equal bit for bit: the
losses, and every gradient and parameter A holds (B must hold the same
names). Prints `N tensors, M differ` (and each that differs, with its
largest absolute difference); exits 1 when any differs.
"""
import os
import sys

import numpy as np


def tensors(root):
    found = {"loss.npy": os.path.join(root, "loss.npy")}
    for kind in ("grad", "param"):
        folder = os.path.join(root, kind)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            found[kind + "/" + name] = os.path.join(folder, name)
    return found


def main():
    a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
    differ = 0
    for name, path in a.items():
        if name not in b:
            print(f"FAIL {name}: missing from {sys.argv[2]}")
            differ += 1
            continue
        x, y = np.load(path), np.load(b[name])
        if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
            worst = np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))) \
                if x.shape == y.shape else float("nan")
            print(f"FAIL {name}: differs (largest difference {worst:.3g})")
            differ += 1
    print(f"{len(a)} tensors, {differ} differ")
    sys.exit(1 if differ or len(a) < 3 else 0)


if __name__ == "__main__":
    main()

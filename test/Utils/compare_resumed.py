#!/usr/bin/env python3
"""compare_resumed.py FULL RESUMED --from K|CHECKPOINT [--exact | --rtol R]

Checks a resumed run against an uninterrupted one: RESUMED/loss.npy (the
steps after K, or after the step the checkpoint directory CHECKPOINT's
latest records) against FULL/loss.npy[K:], and every RESUMED/param/*.npy
against FULL's. --exact: equal bit for bit; else within --rtol relative
(losses elementwise, parameters by relative L2). Prints one line per
comparison and `N failed`; exits 1 when any failed.
"""
import argparse
import os
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("full")
    parser.add_argument("resumed")
    parser.add_argument("--from", dest="start", required=True)
    parser.add_argument("--exact", action="store_true")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    if not args.start.isdigit():
        with open(os.path.join(args.start, "latest")) as f:
            step_dir = os.path.join(args.start, f.read().strip())
        with open(os.path.join(step_dir, "state.txt")) as f:
            args.start = next(int(line.split()[1]) for line in f if line.startswith("step "))
    args.start = int(args.start)
    failed = 0
    pairs = [("loss", np.load(os.path.join(args.full, "loss.npy"))[args.start:],
              np.load(os.path.join(args.resumed, "loss.npy")))]
    params = sorted(os.listdir(os.path.join(args.full, "param")))
    if not params:
        sys.exit("no parameters in " + args.full)
    for name in params:
        pairs.append((name, np.load(os.path.join(args.full, "param", name)),
                      np.load(os.path.join(args.resumed, "param", name))))
    for name, want, got in pairs:
        if want.shape != got.shape:
            ok, detail = False, f"shape {got.shape} != {want.shape}"
        elif args.exact:
            ok = want.tobytes() == got.tobytes()
            detail = "bit-identical" if ok else f"max difference {np.max(np.abs(want - got))}"
        elif name == "loss":
            err = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-30)))
            ok, detail = err <= args.rtol, f"max relative error {err:.2e}"
        else:
            err = float(np.linalg.norm((got - want).ravel()) / max(np.linalg.norm(want.ravel()), 1e-30))
            ok, detail = err <= args.rtol, f"relative L2 {err:.2e}"
        failed += not ok
        print(f"{'ok' if ok else 'FAIL'} {name}: {detail}")
    print(f"{failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

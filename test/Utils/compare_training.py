#!/usr/bin/env python3
"""compare_training.py DUMP REFERENCE INITIAL_PARAMS_DIR [--loss-rtol R]
                      [--grad-rl2 G] [--update-rl2 U] [--mask-from DIR]

Compares a dtc-run --dump directory with a reference trajectory (same
layout: loss.npy, grad/<param>.npy, param/<param>.npy) by the training
issue's criteria:
  - each step's loss within 1e-5 relative;
  - each parameter's last-step gradient within 1e-4 relative L2 error;
  - each parameter's total update (after - before) within 1e-3 relative L2,
    over the elements whose reference gradient is at least 1e-4 of that
    parameter's RMS gradient (Adam turns gradients that are zero in exact
    arithmetic into +-lr steps of arbitrary sign).
INITIAL_PARAMS_DIR holds the parameters before training (<param>.npy).
The options replace the three tolerances (for mixed precision, whose bound
is looser by design). --mask-from takes the gradients that choose the
compared elements from another trajectory: comparing two bf16 runs, the
fp32 reference tells which gradients are zero in exact arithmetic (bf16
rounding makes them noise of the same size in both runs).
A whole gradient that is zero in exact arithmetic (a key projection's bias:
softmax ignores a shift shared by every key) is rounding noise in both runs:
one whose reference norm is below 1e-6 of the largest gradient's is checked
to be as small in the dump, and its update (Adam's +-lr steps of noise) is
not compared.
Prints one line per check and exits 1 if any fails.
"""
import argparse
import os
import sys

import numpy as np


def rel_l2(actual, expected):
    denom = np.linalg.norm(expected)
    return np.linalg.norm(actual - expected) / (denom if denom > 0 else 1.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dump")
    parser.add_argument("ref")
    parser.add_argument("initial")
    parser.add_argument("--loss-rtol", type=float, default=1e-5)
    parser.add_argument("--grad-rl2", type=float, default=1e-4)
    parser.add_argument("--update-rl2", type=float, default=1e-3)
    parser.add_argument("--mask-from")
    args = parser.parse_args()
    dump, ref, initial = args.dump, args.ref, args.initial
    failures = 0

    def report(ok, what):
        nonlocal failures
        failures += not ok
        print(("ok   " if ok else "FAIL ") + what)

    loss, ref_loss = np.load(f"{dump}/loss.npy"), np.load(f"{ref}/loss.npy")
    report(loss.shape == ref_loss.shape, f"loss has {len(ref_loss)} steps")
    for k, (a, e) in enumerate(zip(loss, ref_loss)):
        err = abs(float(a) - float(e)) / abs(float(e))
        report(err <= args.loss_rtol, f"step {k + 1} loss {a:.7f} vs {e:.7f} (rel {err:.2e})")
    names = sorted(os.listdir(f"{ref}/grad"))
    largest = max(np.linalg.norm(np.load(f"{ref}/grad/{name}")) for name in names)
    for name in names:
        g, ref_g = np.load(f"{dump}/grad/{name}"), np.load(f"{ref}/grad/{name}")
        if np.linalg.norm(ref_g) < 1e-6 * largest:
            size = np.linalg.norm(g) / largest
            report(g.shape == ref_g.shape and size < 1e-6,
                   f"grad  {name[:-4]:24} zero in exact arithmetic: norm {size:.2e} of the largest")
            continue
        err = rel_l2(g, ref_g)
        report(g.shape == ref_g.shape and err <= args.grad_rl2, f"grad  {name[:-4]:24} rel L2 {err:.2e}")
        before = np.load(f"{initial}/{name}")
        p, ref_p = np.load(f"{dump}/param/{name}"), np.load(f"{ref}/param/{name}")
        mask_g = np.load(f"{args.mask_from}/grad/{name}") if args.mask_from else ref_g
        rms = np.sqrt(np.mean(mask_g.astype(np.float64) ** 2))
        mask = np.abs(mask_g) >= 1e-4 * rms
        err = rel_l2((p - before)[mask].astype(np.float64), (ref_p - before)[mask].astype(np.float64))
        report(err <= args.update_rl2, f"update {name[:-4]:23} rel L2 {err:.2e} over {mask.sum()}/{mask.size}")
    # State a step updates without a gradient (batch norms' running
    # statistics): its change over training, as an update's.
    extra = sorted(set(os.listdir(f"{ref}/param")) - set(names)) if os.path.isdir(f"{ref}/param") else []
    for name in extra:
        before = np.load(f"{initial}/{name}").astype(np.float64)
        p = np.load(f"{dump}/param/{name}").astype(np.float64)
        ref_p = np.load(f"{ref}/param/{name}").astype(np.float64)
        err = rel_l2(p - before, ref_p - before) if p.shape == ref_p.shape else np.inf
        report(err <= args.update_rl2, f"state  {name[:-4]:23} rel L2 {err:.2e} of its change")
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

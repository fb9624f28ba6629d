#!/usr/bin/env python3
"""check_hypot.py make DIR | fd DIR DUMP

make: writes DIR/batch (ids.npy, labels.npy) and DIR/init (<param>.npy) for
forward.mlir, from a fixed seed.
fd: checks the gradients dtc-run dumped after one step (DUMP/grad) against
central finite differences of the same model's cross-entropy loss written
here in numpy (float64), and the loss against its value. Prints one line
per check and exits 1 if any fails.
"""
import os
import sys

import numpy as np

SHAPES = {"wte": (16, 8), "w1": (16, 8), "c1": (16,), "w2": (8, 16),
          "norm": (8,), "c2": (8,), "head": (16, 8)}


def loss(p, ids, labels):
    x = p["wte"][ids]
    a = np.hypot(x @ p["w1"].T, p["c1"])
    r = x + a @ p["w2"].T
    n = r / np.sqrt(np.mean(r * r, axis=-1, keepdims=True) + 1e-6) * p["norm"]
    logits = np.hypot(n, p["c2"]) @ p["head"].T
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(logp, labels[..., None], -1).mean()


def make(out):
    rng = np.random.default_rng(11)
    os.makedirs(out + "/batch", exist_ok=True)
    os.makedirs(out + "/init", exist_ok=True)
    np.save(out + "/batch/ids.npy", rng.integers(0, 16, (4, 8)))
    np.save(out + "/batch/labels.npy", rng.integers(0, 16, (4, 8)))
    for name, shape in SHAPES.items():
        scale = 1.0 if name in ("norm",) else 0.5
        value = rng.normal(0, scale, shape).astype(np.float32)
        np.save(out + "/init/" + name + ".npy", value)


def fd(out, dump):
    ids = np.load(out + "/batch/ids.npy")
    labels = np.load(out + "/batch/labels.npy")
    p = {n: np.load(out + "/init/" + n + ".npy").astype(np.float64)
         for n in SHAPES}
    failed = 0
    expected = loss(p, ids, labels)
    got = float(np.load(dump + "/loss.npy")[0])
    ok = abs(got - expected) <= 1e-5 * abs(expected)
    failed += not ok
    print(f"{'ok' if ok else 'FAIL'}   loss {got:.7f} vs numpy {expected:.7f}")
    h = 1e-6
    for name in SHAPES:
        grad = np.zeros_like(p[name])
        for i in np.ndindex(p[name].shape):
            saved = p[name][i]
            p[name][i] = saved + h
            up = loss(p, ids, labels)
            p[name][i] = saved - h
            down = loss(p, ids, labels)
            p[name][i] = saved
            grad[i] = (up - down) / (2 * h)
        actual = np.load(dump + "/grad/" + name + ".npy").astype(np.float64)
        err = np.linalg.norm(actual - grad) / np.linalg.norm(grad)
        ok = err <= 1e-5
        failed += not ok
        print(f"{'ok' if ok else 'FAIL'}   grad {name:5} rel L2 {err:.2e} "
              "against finite differences")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(fd(sys.argv[2], sys.argv[3]))

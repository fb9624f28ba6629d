#!/usr/bin/env python3
"""check_collectives.py make INPUT_DIR | check OUTPUT_DIR

`make` writes each rank's x (rank r: arange(8).reshape(4, 2) + 100 r) to
INPUT_DIR/rank<r>/x.npy. `check` recomputes, from the dp=2 x tp=2 rank
layout (rank = 2 dp + tp) and numpy alone, what collectives.mlir's function
returns on each rank, and compares with OUTPUT_DIR/rank<r>/*.npy.
"""
import os
import sys

import numpy as np

RANKS = 4


def x(r):
    return (np.arange(8).reshape(4, 2) + 100 * r).astype(np.float32)


def expected(r):
    dp, tp = divmod(r, 2)
    tp_group = [2 * dp, 2 * dp + 1]
    dp_group = [tp, 2 + tp]
    summed = sum(x(p) for p in tp_group)
    return {
        "sum_tp": summed,
        "max_all": np.max([x(p) for p in range(RANKS)], axis=0),
        "gather_dp": np.concatenate([x(p) for p in dp_group], axis=1),
        "scatter_tp": np.split(summed, 2, axis=0)[tp],
        # chunk r of every rank's rows, concatenated along columns
        "to_all": np.concatenate([np.split(x(p), RANKS, axis=0)[r] for p in range(RANKS)], axis=1),
        # this rank's chunk, no communication; with 2 blocks, its row of each
        "shard_tp": np.split(x(r), 2, axis=0)[tp],
        "shard_blocks": x(r)[[tp, 2 + tp]],
        # dp group rank 1's tensor; from the tp neighbour behind (cyclic),
        # and with shift -1 along dp, from the dp neighbour ahead
        "bcast_dp": x(dp_group[1]),
        "next_tp": x(2 * dp + (tp - 1) % 2),
        "prev_dp": x(2 * ((dp + 1) % 2) + tp),
    }


if sys.argv[1] == "make":
    for r in range(RANKS):
        os.makedirs(os.path.join(sys.argv[2], f"rank{r}"), exist_ok=True)
        np.save(os.path.join(sys.argv[2], f"rank{r}", "x.npy"), x(r))
else:
    bad = 0
    for r in range(RANKS):
        for name, want in expected(r).items():
            got = np.load(os.path.join(sys.argv[2], f"rank{r}", name + ".npy"))
            if got.shape != want.shape or not np.array_equal(got, want):
                bad += 1
                print(f"rank {r} {name}: {got.tolist()} != {want.tolist()}")
    print(f"{RANKS * 10 - bad} outputs match, {bad} differ")
    sys.exit(1 if bad else 0)

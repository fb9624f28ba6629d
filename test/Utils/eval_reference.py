#!/usr/bin/env python3
"""eval_reference.py TOKENS OUT --rows B --sequence S --batches K

Writes the evaluation batches `--eval-data TOKENS --eval-batches K` reads,
from the file itself: batch k's row r is window k*B + r in file order
(wrapping around), ids its first S tokens and labels the S after the
first, as OUT/b<k>/ids.npy and labels.npy for `dtc-run --batch`.
"""
import argparse
import os

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tokens")
    parser.add_argument("out")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--sequence", type=int, required=True)
    parser.add_argument("--batches", type=int, required=True)
    args = parser.parse_args()
    tokens = np.load(args.tokens).astype(np.int64)
    s = args.sequence
    windows = (len(tokens) - 1) // s
    for k in range(args.batches):
        rows = [(k * args.rows + r) % windows for r in range(args.rows)]
        ids = np.stack([tokens[w * s:w * s + s] for w in rows])
        labels = np.stack([tokens[w * s + 1:w * s + s + 1] for w in rows])
        os.makedirs(f"{args.out}/b{k}", exist_ok=True)
        np.save(f"{args.out}/b{k}/ids.npy", ids)
        np.save(f"{args.out}/b{k}/labels.npy", labels)


if __name__ == "__main__":
    main()

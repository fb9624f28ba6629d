#!/usr/bin/env python3
"""Checks the all-to-all bytes dtc-run reports for a sorted mixture under
expert parallelism against PyTorch's routing (routing.npy, written by
make_models.py): each rank sends only the filled rows of the buffers.

Per layer and step, rank (d, q) of a dp x ep mesh (routing group r, its
world rank: the batch is split over dp x ep) sends, in the dispatch, its
group's rows of every expert another ep rank holds, and in the combine the
rows of its ep peers' groups of its own experts; the backward sends the
same again (the combine's gradient is a dispatch, the dispatch's a
combine), but for a buffer's trailing rows of tokens whose gradient is
zero: those no loss depends on (causal attention: a token whose label and
every later label of its sequence are ignored, -100). A buffer's rows are
its tokens in order. Each all-to-all first exchanges its counts: (ep - 1)
x experts/ep int64s. Usage:
  filled_rows_bytes.py LOG ROUTING LABELS --dp D --ep E --row-bytes N
"""
import argparse
import re

import numpy as np


def expected(routing, labels, dp, ep, row_bytes):
    steps, layers, tokens, _ = routing.shape
    # Whether each token's gradient is nonzero: a valid label at or after it.
    live = np.flip(np.maximum.accumulate(np.flip(labels != -100, 1), 1), 1).reshape(-1)
    groups = dp * ep
    experts = 4
    local = experts // ep
    per_group = tokens // groups
    result = []
    for rank in range(groups):
        d, q = divmod(rank, ep)
        mine = range(q * local, (q + 1) * local)
        total = 0
        for step in range(steps):
            for layer in range(layers):
                def rows(group, expert, backward):
                    first = group * per_group
                    chosen = [t for t in range(first, first + per_group)
                              if expert in routing[step, layer, t]]
                    while backward and chosen and not live[chosen[-1]]:
                        chosen.pop()
                    return len(chosen)

                for backward in (False, True):
                    dispatch = sum(rows(rank, e, backward) for e in range(experts)
                                   if e not in mine)
                    combine = sum(rows(d * ep + peer, e, backward) for peer in range(ep)
                                  if peer != q for e in mine)
                    total += (dispatch + combine) * row_bytes + 2 * (ep - 1) * local * 8
        result.append(total / steps)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("routing")
    parser.add_argument("labels")
    parser.add_argument("--dp", type=int, default=1)
    parser.add_argument("--ep", type=int, required=True)
    parser.add_argument("--row-bytes", type=int, required=True)
    args = parser.parse_args()
    want = expected(np.load(args.routing), np.load(args.labels), args.dp, args.ep, args.row_bytes)
    reported = {}
    for line in open(args.log):
        match = re.match(r"rank (\d+) per step: .*all_to_all \d+ calls, (\d+) bus bytes", line)
        if match:
            reported[int(match.group(1))] = int(match.group(2))
    mismatched = 0
    for rank, bytes_ in enumerate(want):
        got = reported.get(rank)
        ok = got == round(bytes_)
        mismatched += not ok
        print(f"rank {rank}: all_to_all {got} bus bytes a step, {bytes_:.0f} from "
              f"PyTorch's routing: {'ok' if ok else 'MISMATCH'}")
    print(f"{mismatched} mismatched")


if __name__ == "__main__":
    main()

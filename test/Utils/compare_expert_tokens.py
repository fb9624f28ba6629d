#!/usr/bin/env python3
"""compare_expert_tokens.py METRICS.jsonl REFERENCE.npy
Checks that the first step's `expert_tokens` in a dtc-run --metrics file
(per router, the (token, choice) pairs sent to each expert) equal the
reference counts ([routers, experts], PyTorch's routing of the same batch).
Prints them and exits 1 when they differ."""
import json
import sys

import numpy as np


def main():
    with open(sys.argv[1]) as f:
        first = json.loads(f.readline())
    measured = first.get("expert_tokens")
    reference = np.load(sys.argv[2]).tolist()
    if measured != reference:
        print(f"FAIL: expert tokens of step {first['step']}: {measured}, reference {reference}")
        return 1
    print(f"expert tokens of step {first['step']} equal the reference: {measured}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

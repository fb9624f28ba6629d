#!/usr/bin/env python3
"""Checks that partitioned steps' planned activation peaks per rank are at
most the given fractions of the single device's.

usage: check_activation_ratio.py SINGLE/report.json [OUT/report.json MAX]...
"""
import json
import sys


def peak(path):
    with open(path) as f:
        return json.load(f)["memory_bytes_per_rank"]["activation_peak"]


def main():
    single, rest = peak(sys.argv[1]), sys.argv[2:]
    failed = 0
    for path, most in zip(rest[::2], rest[1::2]):
        ratio = peak(path) / single
        ok = ratio <= float(most)
        failed += not ok
        print(f"{'ok' if ok else 'FAIL'} activation peak {peak(path)} B = "
              f"{ratio:.3f} of one device's {single} B (at most {most}): {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

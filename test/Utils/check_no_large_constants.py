#!/usr/bin/env python3
"""Fails when an MLIR file holds a constant that stores more than LIMIT
elements: a dense<[...]> or dense<"0x..."> literal (a splat, dense<v>, stores
one element whatever its shape) or a dense_resource blob.

usage: check_no_large_constants.py FILE.mlir [--limit 4096]
"""
import argparse
import math
import re
import sys

# dense<LITERAL> : tensor<DIMSxTYPE>, the literal a list, a hex string or a
# splat; dense_resource<NAME> : tensor<...>.
ATTRIBUTE = re.compile(r'(dense_resource<[^>]*>|dense<(\[|"0x)?)')
TENSOR = re.compile(r'tensor<((?:\d+x)*)[a-z0-9]+>')


def stored_constants(text):
    """(elements stored, shape text, line number) of each dense attribute."""
    for match in ATTRIBUTE.finditer(text):
        tensor = TENSOR.search(text, match.end())
        if not tensor:
            continue
        dims = [int(d) for d in tensor.group(1).split("x") if d]
        elements = math.prod(dims)
        splat = match.group(1).startswith("dense<") and not match.group(2)
        line = text.count("\n", 0, match.start()) + 1
        yield (1 if splat else elements), tensor.group(0), line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--limit", type=int, default=4096)
    args = parser.parse_args()
    with open(args.file) as f:
        text = f.read()
    large = [c for c in stored_constants(text) if c[0] > args.limit]
    for elements, shape, line in large:
        print(f"{args.file}:{line}: a constant of {elements} elements ({shape}), "
              f"above {args.limit}")
    count = sum(1 for _ in stored_constants(text))
    print(f"{count} constants, {len(large)} above {args.limit} elements")
    sys.exit(1 if large else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""check_activation_formula.py REPORT POLICY --s S --b B --h H --a A --t T

Checks report.json's saved_activation_bytes_per_transformer_unit (what each
layer holds from its forward to its backward, bf16, sequence parallelism
over T ranks) against Korthikanti et al.'s per-layer activation memory
("Reducing Activation Recomputation in Large Transformer Models", table 2)
and dtc's own count, derived in docs/Remat.md:

  policy     paper                     dtc
  none       sbh(34/t + 5as/(ht))      32sbh/t + 2as^2b/t + 16sb/t
  selective  34sbh/t                   32sbh/t + 16sb/t
  full       2sbh/t                    2sbh/t

Every layer but the last must hold exactly dtc's count (a layer holds its
output for the next one's backward; the last one's output is read by no
later layer), and dtc's count must not exceed the paper's. Prints the
figures; exits 1 on a mismatch.
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("policy", choices=["none", "selective", "full"])
    for name in "sbhat":
        parser.add_argument("--" + name, type=int, required=True)
    args = parser.parse_args()
    s, b, h, a, t = args.s, args.b, args.h, args.a, args.t
    paper = {"none": s * b * h * (34 / t + 5 * a * s / (h * t)),
             "selective": 34 * s * b * h / t,
             "full": 2 * s * b * h / t}[args.policy]
    dtc = {"none": 32 * s * b * h // t + 2 * a * s * s * b // t + 16 * s * b // t,
           "selective": 32 * s * b * h // t + 16 * s * b // t,
           "full": 2 * s * b * h // t}[args.policy]
    with open(args.report) as f:
        units = json.load(f)["saved_activation_bytes_per_transformer_unit"]
    wrong = [i for i, held in enumerate(units[:-1]) if held != dtc]
    print(f"{args.policy}: {len(units)} layers; paper {paper:.0f} B per layer, "
          f"dtc's count {dtc} B, held {sorted(set(units[:-1]))} (last layer {units[-1]})")
    if wrong or dtc > paper or len(units) < 2:
        print(f"FAIL: layers {wrong} differ from dtc's count, or it exceeds the paper's")
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()

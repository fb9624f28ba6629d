#!/usr/bin/env python3
"""Counts the configurations of a dtc-plan --json file that leave the terms
of test/Planner/plan-llama3-8b.test's framework: full recomputation, ZeRO 0
or 1, and pipeline stages with as many layers each (--pipeline-split).

usage: check_plan_terms.py PLAN.json
Prints "N configurations, P pipelined, K off the terms".
"""
import json
import re
import sys


def main():
    plans = json.load(open(sys.argv[1]))["plans"]
    off = pipelined = 0
    for plan in plans:
        split = re.search(r"--pipeline-split ([0-9,]+)", plan["flags"])
        even = not split or len(set(split.group(1).split(","))) == 1
        pipelined += plan["pp"] > 1
        off += plan["remat"] != "full" or plan["zero"] > 1 or not even
    print(f"{len(plans)} configurations, {pipelined} pipelined, {off} off the terms")


if __name__ == "__main__":
    main()

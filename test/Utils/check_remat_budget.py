#!/usr/bin/env python3
"""check_remat_budget.py TOOLS MODEL OUT [dtc-compile flags...]

Checks dtc-remat's budget policy on MODEL against the fixed policies:
compiles (on the reference target) with --remat none, full, selective and
every=K for K = 2, 4, ..., reading each one's planned activation peak and
recomputed FLOPs from report.json; then with budget=B for budgets spread
from the smallest of those peaks to none's. At each budget the plan must
fit (peak <= B) and recompute no more FLOPs than the cheapest fixed policy
that fits; it must recompute strictly fewer at one budget at least. A
budget one byte below the smallest peak must be refused, naming that
peak. Prints one line per budget and a summary; exits 1 on a failure.
"""
import json
import os
import subprocess
import sys


def compile_with(tools, model, out, flags, policy):
    run = subprocess.run([os.path.join(tools, "dtc-compile"), model, "-o", out,
                          "--target", "reference", "--remat", policy] + flags,
                         capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    peak = report["memory_bytes_per_rank"]["activation_peak"]
    flops = report.get("remat", {}).get("recompute_flops", {}).get("total", 0)
    return (peak, flops), run.stderr


def main():
    tools, model, out, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    fixed = {}
    for policy in ["none", "full", "selective", "every=2", "every=4"]:
        result, err = compile_with(tools, model, os.path.join(out, policy), flags, policy)
        if result is None:
            sys.exit(f"FAIL --remat {policy}: {err}")
        fixed[policy] = result
        print(f"{policy}: peak {result[0]} B, {result[1]:.0f} FLOPs recomputed")
    smallest = min(peak for peak, _ in fixed.values())
    failures, cheaper = 0, 0
    for policy in ["full", "selective"]:
        if fixed[policy][0] >= fixed["none"][0]:
            print(f"FAIL {policy}: peak not below none's")
            failures += 1
    steps = 8
    for i in range(steps + 1):
        budget = smallest + (fixed["none"][0] - smallest) * i // steps
        result, err = compile_with(tools, model, os.path.join(out, f"budget{i}"), flags,
                                   f"budget={budget}")
        if result is None:
            print(f"FAIL budget={budget}: refused: {err.strip()}")
            failures += 1
            continue
        peak, flops = result
        best = min(f for p, f in fixed.values() if p <= budget)
        verdict = "ok"
        if peak > budget or flops > best:
            verdict = "FAIL"
            failures += 1
        elif flops < best:
            cheaper += 1
            verdict = "ok, fewer"
        print(f"budget={budget}: peak {peak} B, {flops:.0f} FLOPs recomputed "
              f"(best fixed policy that fits: {best:.0f}) {verdict}")
    result, err = compile_with(tools, model, os.path.join(out, "infeasible"), flags,
                               f"budget={smallest - 1}")
    if result is not None or f"give budget={smallest} or more" not in err:
        print(f"FAIL budget={smallest - 1}: not refused naming {smallest}: {err.strip()}")
        failures += 1
    else:
        print(f"budget={smallest - 1}: refused, naming {smallest} B")
    if cheaper == 0:
        print("FAIL no budget recomputes fewer FLOPs than the fixed policies")
        failures += 1
    print(f"{steps + 1} budgets, {cheaper} with fewer FLOPs than any fixed policy that fits, "
          f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

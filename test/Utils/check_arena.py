#!/usr/bin/env python3
"""check_arena.py OUT [OUT...]: the arena dtc-compile planned for each OUT
(report.json) is at least the most bytes live at once and at most 10% above
it; so is a compiled program's own arena (its fused step's), when OUT holds
one. Prints one line per arena."""
import json
import os
import sys

failed = False


def check(name, arena, bound, peak):
    global failed
    ok = peak <= bound <= arena <= 1.10 * bound
    failed |= not ok
    print(f"{'ok' if ok else 'FAIL'} {name}: arena {arena} B, "
          f"lower bound {bound} B (+{100 * (arena - bound) / bound:.1f}%), activation peak {peak} B")


for out in sys.argv[1:]:
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    memory = report["memory_bytes_per_rank"]
    name = os.path.basename(out)
    check(name, memory["arena"], memory["arena_lower_bound"], memory["activation_peak"])
    if "compiled_program" in report:
        program = report["compiled_program"]
        # (Fusion leaves fewer values to store: no activation peak to hold
        # it to.)
        check(name + " (compiled)", program["arena"], program["arena_lower_bound"], 0)
sys.exit(1 if failed else 0)

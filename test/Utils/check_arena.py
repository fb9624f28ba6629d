#!/usr/bin/env python3
"""check_arena.py OUT [OUT...]: the arena dtc-compile planned for each OUT
(report.json) is at least the most bytes live at once and at most 10% above
it; prints one line per OUT."""
import json
import os
import sys

failed = False
for out in sys.argv[1:]:
    with open(os.path.join(out, "report.json")) as f:
        memory = json.load(f)["memory_bytes_per_rank"]
    arena, bound, peak = memory["arena"], memory["arena_lower_bound"], memory["activation_peak"]
    ok = peak <= bound <= arena <= 1.10 * bound
    failed |= not ok
    print(f"{'ok' if ok else 'FAIL'} {os.path.basename(out)}: arena {arena} B, "
          f"lower bound {bound} B (+{100 * (arena - bound) / bound:.1f}%), activation peak {peak} B")
sys.exit(1 if failed else 0)

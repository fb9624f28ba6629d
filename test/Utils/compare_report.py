#!/usr/bin/env python3
"""Checks that the collectives dtc-compile counted in OUT/report.json are
the ones every rank's Communicator counted at run time (dtc-run's per-rank
report lines): the same kinds, calls and bus bytes per step.

usage: compare_report.py OUT/report.json RUN.log
"""
import json
import re
import sys


def main():
    report, log = sys.argv[1], sys.argv[2]
    with open(report) as f:
        expected = json.load(f)["collective_totals_per_step"]
    ranks = {}
    line_re = re.compile(r"^rank (\d+) per step: [0-9.]+ s((?:, \S+ \S+ calls, \S+ bus bytes)*)$")
    kind_re = re.compile(r", (\S+) (\S+) calls, (\S+) bus bytes")
    with open(log) as f:
        for line in f:
            m = line_re.match(line.rstrip("\n"))
            if m:
                ranks[int(m.group(1))] = {
                    k: (float(c), float(b)) for k, c, b in kind_re.findall(m.group(2))}
    if not ranks:
        print("FAIL no per-rank report lines in", log)
        return 1
    failed = 0
    for rank, kinds in sorted(ranks.items()):
        for kind in sorted(set(kinds) | set(expected)):
            want = expected.get(kind, {"calls": 0, "bus_bytes": 0})
            calls, bus = kinds.get(kind, (0, 0))
            ok = calls == want["calls"] and abs(bus - want["bus_bytes"]) < 0.5
            failed += not ok
            print("%s rank %d %s: run %g calls, %.0f bus bytes; report %d calls, %.0f bus bytes"
                  % ("ok  " if ok else "FAIL", rank, kind, calls, bus,
                     want["calls"], want["bus_bytes"]))
    print("%d ranks, %d failed" % (len(ranks), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

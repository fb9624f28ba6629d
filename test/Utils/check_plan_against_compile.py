#!/usr/bin/env python3
"""Compiles each configuration of a dtc-plan --json file with dtc-compile
(the flags the planner printed) and compares the planner's memory per rank
with report.json: parameters, gradients, master weights and optimizer state
must be equal to the byte; the estimated activations within --tolerance of
the compiled activation peak (with pp, of the pp rank the planner
reports: report.json's pp_ranks); and, for a configuration without tp,
pp or recomputation, the bus bytes over dp (and cp and ep: with ep, its
exchanges of tokens too) equal to the compiled collectives' over them.
With --exact-pp, configurations with pp are compared too (those of the pp
rank the planner's figures are, its bus_pp_rank, from report.json's
pp_ranks): the bytes over pp and over the batch's axes. With --exact-tp,
configurations with tp (and pp) too: the bytes over tp alone, over pp,
and over the batch's axes (tp's partial sums over dp and tp among them).

usage: check_plan_against_compile.py PLAN.json MODEL.onnx OUTDIR [--tolerance 0.1] [--exact-pp] [--exact-tp] -- DTC_COMPILE [ARGS...]
Prints one line per configuration; exits 1 on any difference.
"""
import argparse
import json
import subprocess
import sys

STATE = ["parameters", "gradients", "master_weights", "optimizer_state"]


def compare(axes, mine, theirs, relative=None):
    """The planned and compiled bus bytes over `axes`: whether they are equal
    (bus bytes are fractions of n-1/n) or within `relative` of the compiled
    figure, and the line's text."""
    close = abs(mine - theirs) <= relative * theirs if relative else abs(mine - theirs) < 1
    verdict = f"within {relative:.1%}" if relative else "equal"
    return close, (f"; {axes} bus bytes {verdict if close else 'DIFFER'}"
                   f" ({mine:.0f} planned, {theirs:.0f} compiled)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--tolerance", type=float, default=0.1)
    parser.add_argument("--exact-pp", action="store_true")
    parser.add_argument("--exact-tp", action="store_true")
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: ... -- DTC_COMPILE [ARGS...]")
    args = parser.parse_args(argv[:argv.index("--")])
    compiler = argv[argv.index("--") + 1:]
    plans = json.load(open(args.plan))["plans"]
    if not plans:
        sys.exit("no configurations in " + args.plan)
    failed = False
    for i, plan in enumerate(plans):
        out = f"{args.out}/{i}"
        command = [*compiler, args.model, "--shapes-only", *plan["flags"].split(), "-o", out]
        subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
        compiled = json.load(open(out + "/report.json"))
        report = compiled["memory_bytes_per_rank"]
        if plan["pp"] > 1:  # the planner's figures are those of its pp rank
            report = next(r for r in compiled["pp_ranks"] if r["pp_rank"] == plan["pp_rank"])
        mine = plan["memory_bytes_per_rank"]
        state = [k for k in STATE if mine[k] != report[k]]
        estimate, peak = mine["activations_estimated"], report["activation_peak"]
        error = abs(estimate - peak) / peak
        ok = not state and error <= args.tolerance
        communication = ""
        exact = (plan["tp"] == 1 and (plan["pp"] == 1 or args.exact_pp)
                 or args.exact_tp)
        if exact and plan["remat"] == "none":
            planned = plan["bus_bytes_per_step"]
            # The bus bytes by axes (a ring's sends apart) of the rank the
            # planner's are: with pp its busiest pp rank's (pp_ranks).
            if plan["pp"] > 1:
                rank = next(r for r in compiled["pp_ranks"] if r["pp_rank"] == plan["bus_pp_rank"])
                by_axes, sent = ({tuple(k.split(",")): v for k, v in rank[key].items()}
                                 for key in ["bus_bytes_by_axes", "send_recv_bus_bytes_by_axes"])
            else:
                by_axes, sent = {}, {}
                for c in compiled["collectives_per_step"]:
                    for sums in [by_axes, sent] if c["kind"] == "send_recv" else [by_axes]:
                        sums[tuple(c["axes"])] = sums.get(tuple(c["axes"]), 0) + c["bus_bytes"]

            def over(axes):
                return by_axes.get(tuple(axes), 0)

            # The gradients' reduction: over dp, and over cp and ep too (cp's
            # ring apart); with ep, its exchanges of tokens for experts.
            results = [compare("dp and ep" if plan.get("ep", 1) > 1 else "dp",
                               planned["dp"] + planned.get("ep", 0),
                               sum(v - sent.get(k, 0) for k, v in by_axes.items()
                                   if set(k) & {"dp", "cp", "ep"}))]
            if plan["pp"] > 1:
                results.append(compare("pp", planned["pp"], over(["pp"])))
            if plan["tp"] > 1:
                results.append(compare("tp", planned["tp"], over(["tp"])))
            if plan.get("cp", 1) > 1:
                # Ring attention's key and value blocks (the compiled step
                # also passes the mask's blocks around: within 0.1%).
                ring = sum(v for k, v in sent.items() if "cp" in k)
                results.append(compare("cp", planned["cp"], ring, relative=1e-3))
            ok &= all(close for close, _ in results)
            communication = "".join(text for _, text in results)
        failed |= not ok
        print(f"{plan['flags']}: state {'equal' if not state else 'DIFFERS in ' + ','.join(state)}"
              f"; activations {estimate} estimated, {peak} compiled "
              f"({100 * error:.1f}%{'' if error <= args.tolerance else ', TOO FAR'})"
              f"{communication}")
        for k in state:
            print(f"  {k}: planned {mine[k]}, compiled {report[k]}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

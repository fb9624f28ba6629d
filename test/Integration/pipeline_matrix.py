#!/usr/bin/env python3
"""The pipeline matrix (ctest -L pipeline-full): every schedule at pp=2 and
pp=4 with M = P, 2P and 4P microbatches, and pp with dp and tp, each three
AdamW steps of the 8-block GPT (Inputs/pipeline/gpt8, batch 32) on the ranks
of mpirun against PyTorch's trajectory (Utils/compare_training.py, the
standard tolerances). Prints one line per configuration and the count that
failed; exits 1 if any did.

  pipeline_matrix.py --tools BUILD/bin [--filter REGEX]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "Inputs", "pipeline", "gpt8")
UTILS = os.path.join(HERE, "..", "Utils")


def configurations():
    for schedule in ["gpipe", "1f1b", "interleaved", "zb-h1", "zbv"]:
        for pp in [2, 4]:
            for factor in [1, 2, 4]:
                flags = ["--mesh", f"pp={pp}", "--microbatches", str(factor * pp),
                         "--pipeline-schedule", schedule]
                if schedule == "interleaved":
                    flags += ["--virtual-stages", "2"]
                yield f"{schedule} pp={pp} M={factor * pp}", pp, flags
    yield "1f1b dp=2,pp=2 M=4 zero=1", 4, ["--mesh", "dp=2,pp=2", "--microbatches", "4",
                                           "--zero", "1"]
    yield "zbv pp=2,tp=2 M=2", 4, ["--mesh", "pp=2,tp=2", "--microbatches", "2",
                                   "--pipeline-schedule", "zbv"]
    yield "interleaved pp=2,dp=2,tp=2 M=4 zero=1", 8, [
        "--mesh", "pp=2,dp=2,tp=2", "--microbatches", "4", "--pipeline-schedule",
        "interleaved", "--virtual-stages", "2", "--zero", "1"]


def run(tools, name, ranks, flags, work):
    out = os.path.join(work, re.sub(r"[^a-z0-9]+", "-", name))
    steps = [
        [os.path.join(tools, "dtc-compile"), os.path.join(MODEL, "model.onnx"), "-o", out,
         "--lr", "0.01", "--weight-decay", "0.01"] + flags,
        [os.path.join(UTILS, "mpirun.sh"), "-np", str(ranks), os.path.join(tools, "dtc-run"), out,
         "--batch", os.path.join(MODEL, "batch"), "--steps", "3", "--dump", out + "-dump",
         "--collective-timeout", "120"],
        [sys.executable, os.path.join(UTILS, "compare_training.py"), out + "-dump",
         os.path.join(MODEL, "adamw"), os.path.join(MODEL, "initial")],
    ]
    # (As the lit suite: CI runs as root.)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for command in steps:
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            return "FAIL " + os.path.basename(command[0]) + ": " + " | ".join(tail)
    return "ok"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", required=True)
    parser.add_argument("--filter", default="")
    args = parser.parse_args()
    failed = total = 0
    with tempfile.TemporaryDirectory() as work:
        for name, ranks, flags in configurations():
            if not re.search(args.filter, name):
                continue
            result = run(args.tools, name, ranks, flags, work)
            total += 1
            failed += result != "ok"
            print(f"{result:4} {name}", flush=True)
    print(f"{total} configurations, {failed} failed")
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The pipeline bubble, measured against the schedule simulator's.

usage: bench/pipeline_bubble.py [BUILD_BIN_DIR] [--schedules gpipe,1f1b,interleaved,zb-h1,zbv]
                                [--microbatches M] [--repeats N]

The 8-block GPT of test/Integration/Inputs/pipeline/make_models.py, wider
(d 64, 4 heads, sequence 32, vocabulary 256, batch 16; exported into a
temporary directory with Debian's python3-torch), is compiled for pp=2
with each schedule (interleaved with two virtual stages per rank) and
--microbatches M (default 4) and trained for three
steps on two ranks, one thread each (the reference executor), with
`dtc-run --trace`: each rank
times the fragments of the last step as it runs them. dtc-run prints the
measured bubble of each pp rank (idle time over the time from the first
fragment's start to the last one's end) and the bubble the simulator
predicts when fed the measured mean time of each stage's forward, input
gradient and weight gradients. Each figure is the median of --repeats
runs. Checked: every fragment mean at least 10 ms, and the two bubbles of
every pp rank within 15% of each other (relative to the measured one).
Exits 1 when a check fails. Run with Debian's Python (/usr/bin/python3), on an otherwise
idle machine (the load average is printed).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

from generators import run_generator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = os.path.join(ROOT, "test", "Integration", "Inputs", "pipeline", "make_models.py")
MPIRUN = os.path.join(ROOT, "test", "Utils", "mpirun.sh")


def make_model(directory):
    """Writes DIRECTORY/gpt8/{model.onnx,batch/} at the bench's sizes."""
    run_generator(GENERATOR, directory,
                  lambda gpt: gpt.write_fixture("gpt8", gpt.build_model(), gpt.VOCAB, gpt.SEQ),
                  VOCAB=256, DIM=64, HEADS=4, SEQ=32, BATCH=16)
    return os.path.join(directory, "gpt8")


def percentages(line):
    return [float(x) / 100 for x in re.findall(r"([0-9.]+)%", line)]


def run_once(tools, model, out, trace):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [MPIRUN, "-np", "2", os.path.join(tools, "dtc-run"), out, "--batch",
         os.path.join(model, "batch"), "--steps", "3", "--trace", trace], env=env,
        capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"dtc-run failed:\n{done.stdout}\n{done.stderr}")
    measured = simulated = None
    means = []
    for line in done.stdout.splitlines():
        if "measured (last step)" in line:
            measured = percentages(line)
        elif line.startswith("pipeline simulated"):
            simulated = percentages(line)
        elif line.startswith("pipeline stage"):
            means += [float(x) for x in re.findall(r"(\d[0-9.e+-]*) s\b", line)]
    return measured, simulated, [m for m in means if m > 0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tools", nargs="?", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--schedules", default="gpipe,1f1b,interleaved,zb-h1,zbv")
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'schedule':10s} {'pp rank':>7s} {'measured':>9s} {'simulated':>9s} "
          f"{'difference':>10s}  shortest fragment mean")
    ok = True
    with tempfile.TemporaryDirectory() as work:
        model = make_model(work)
        for schedule in args.schedules.split(","):
            out = os.path.join(work, schedule)
            flags = ["--virtual-stages", "2"] if schedule == "interleaved" else []
            subprocess.run([os.path.join(args.tools, "dtc-compile"),
                            os.path.join(model, "model.onnx"), "-o", out, "--mesh", "pp=2",
                            "--microbatches", str(args.microbatches), "--pipeline-schedule",
                            schedule] + flags, check=True, capture_output=True)
            runs = [run_once(args.tools, model, out, os.path.join(work, f"{schedule}.json"))
                    for _ in range(args.repeats)]
            shortest = min(min(means) for _, _, means in runs)
            ok &= shortest >= 0.010
            for rank in range(2):
                measured = statistics.median(m[rank] for m, _, _ in runs)
                simulated = statistics.median(s[rank] for _, s, _ in runs)
                difference = abs(simulated - measured) / measured
                ok &= difference <= 0.15
                print(f"{schedule:10s} {rank:7d} {measured:9.1%} {simulated:9.1%} "
                      f"{difference:10.1%}  {shortest * 1e3:.1f} ms", flush=True)
    print("ok" if ok else "FAIL: a bubble differs by more than 15% or a fragment is under 10 ms")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

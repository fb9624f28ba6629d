#!/usr/bin/env python3
"""The pipeline matrix (ctest -L pipeline-full): every schedule at pp=2 and
pp=4 with M = P, 2P and 4P microbatches, and pp with dp, tp, sequence
parallelism, ZeRO-1, bf16 (against one device in bf16, with the bf16
tolerances) and recomputation, each three AdamW steps of the 8-block GPT
(Inputs/pipeline/gpt8, batch 32), and of the 8-layer Llama-style model
(llama8) and a 3-stage split of the 3-block GPT (gpt3) on the ranks
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
INPUTS = os.path.join(HERE, "Inputs", "pipeline")
GPT8 = (os.path.join(INPUTS, "gpt8"), [])
# (The rotary tables are buffers, exported as initializers.)
LLAMA8 = (os.path.join(INPUTS, "llama8"), ["--freeze", "^rope_"])
GPT3 = (os.path.join(INPUTS, "gpt3"), [])
UTILS = os.path.join(HERE, "..", "Utils")


# A bf16 run's reference: one device in bf16 (flags of its own compile),
# with twice the bf16 tolerances against PyTorch in f32, as the suite's
# other comparisons of two bf16 runs (both carry bf16's rounding; this
# model's single-device bf16 gradients are 0.15 from f32's).
BF16 = (["--precision", "bf16"],
        ["--loss-rtol", "3.2e-2", "--grad-rl2", "0.2", "--update-rl2", "0.4"])


def configurations():
    for schedule in ["gpipe", "1f1b", "interleaved", "zb-h1", "zbv"]:
        for pp in [2, 4]:
            for factor in [1, 2, 4]:
                flags = ["--mesh", f"pp={pp}", "--microbatches", str(factor * pp),
                         "--pipeline-schedule", schedule]
                if schedule == "interleaved":
                    flags += ["--virtual-stages", "2"]
                yield f"{schedule} pp={pp} M={factor * pp}", pp, flags, None, GPT8
    yield "1f1b dp=2,pp=2 M=4 zero=1", 4, ["--mesh", "dp=2,pp=2", "--microbatches", "4",
                                           "--zero", "1"], None, GPT8
    yield "zbv pp=2,tp=2 M=2", 4, ["--mesh", "pp=2,tp=2", "--microbatches", "2",
                                   "--pipeline-schedule", "zbv"], None, GPT8
    yield "interleaved pp=2,dp=2,tp=2 M=4 zero=1", 8, [
        "--mesh", "pp=2,dp=2,tp=2", "--microbatches", "4", "--pipeline-schedule",
        "interleaved", "--virtual-stages", "2", "--zero", "1"], None, GPT8
    yield "1f1b pp=2,dp=2,tp=2 M=4 sp zero=1 bf16", 8, [
        "--mesh", "pp=2,dp=2,tp=2", "--microbatches", "4", "--sequence-parallel", "--zero",
        "1", "--precision", "bf16"], BF16, GPT8
    yield "zb-h1 pp=4,tp=2 M=8 sp remat=full", 8, [
        "--mesh", "pp=4,tp=2", "--microbatches", "8", "--pipeline-schedule", "zb-h1",
        "--sequence-parallel", "--remat", "full"], None, GPT8
    # The Llama-style model (its head tied to the embedding, which the first
    # and the last stage both use) and a 3-stage split of 3 blocks:
    for schedule in ["1f1b", "interleaved", "zbv"]:
        flags = ["--mesh", "pp=4", "--microbatches", "8", "--pipeline-schedule", schedule]
        if schedule == "interleaved":
            flags += ["--virtual-stages", "2"]
        yield f"llama8 {schedule} pp=4 M=8", 4, flags, None, LLAMA8
    yield "llama8 1f1b pp=2,tp=2 M=4 sp", 4, ["--mesh", "pp=2,tp=2", "--microbatches", "4",
                                             "--sequence-parallel"], None, LLAMA8
    yield "gpt3 1f1b pp=3 M=3", 3, ["--mesh", "pp=3", "--microbatches", "3"], None, GPT3
    yield "gpt3 zb-h1 pp=3 M=6", 3, ["--mesh", "pp=3", "--microbatches", "6",
                                     "--pipeline-schedule", "zb-h1"], None, GPT3


def run(tools, name, ranks, flags, reference, fixture, work):
    """Compiles and runs `flags` on `ranks` ranks and compares three steps
    with PyTorch's, or with one device's under `reference` (its flags and
    the comparison's tolerances). Returns "ok" or why not."""
    model, model_flags = fixture
    out = os.path.join(work, re.sub(r"[^a-z0-9]+", "-", name))
    compile_flags = [os.path.join(model, "model.onnx"), "--lr", "0.01", "--weight-decay", "0.01",
                     *model_flags]
    steps = []
    expected, tolerances = os.path.join(model, "adamw"), []
    if reference:
        reference_flags, tolerances = reference
        expected = out + "-reference-dump"
        steps += [
            [os.path.join(tools, "dtc-compile"), *compile_flags, "-o", out + "-reference",
             *reference_flags],
            [os.path.join(tools, "dtc-run"), out + "-reference", "--batch",
             os.path.join(model, "batch"), "--steps", "3", "--dump", expected],
        ]
    steps += [
        [os.path.join(tools, "dtc-compile"), *compile_flags, "-o", out] + flags,
        [os.path.join(UTILS, "mpirun.sh"), "-np", str(ranks), os.path.join(tools, "dtc-run"), out,
         "--batch", os.path.join(model, "batch"), "--steps", "3", "--dump", out + "-dump",
         "--collective-timeout", "120"],
        [sys.executable, os.path.join(UTILS, "compare_training.py"), out + "-dump", expected,
         os.path.join(model, "initial")] + tolerances,
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
        for name, ranks, flags, reference, fixture in configurations():
            if not re.search(args.filter, name):
                continue
            result = run(args.tools, name, ranks, flags, reference, fixture, work)
            total += 1
            failed += result != "ok"
            print(f"{result:4} {name}", flush=True)
    print(f"{total} configurations, {failed} failed")
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())

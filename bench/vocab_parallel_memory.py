#!/usr/bin/env python3
"""Activation memory per rank of vocabulary-parallel training, against tp.

usage: /usr/bin/python3 bench/vocab_parallel_memory.py [BUILD_BIN_DIR]
       (default build/bin; Debian's python3-torch exports the model)

Exports the GPT-2-style example architecture (examples/tiny_transformer)
with GPT-2's vocabulary of 50257 classes (dimension 64, 4 heads, one
block, batch 4 x 64 tokens) to a temporary directory, compiles its AdamW
step with `dtc-compile --mesh tp=T` for T = 1, 2, 4, 8 (the vocabulary
padded to a multiple of T and split over the ranks, the cross-entropy
vocabulary-parallel) and prints each rank's planned activation peak
(report.json; equal to the reference executor's measured peak, as the
integration tests check) next to the bytes of one [batch, sequence,
vocabulary] f32 tensor, whole and as one rank's part. Without
dtc-sink-shards each rank built the cross-entropy's one-hot masks at the
whole vocabulary's width; now every vocabulary-wide temporary is the
rank's part, so the peak falls about as 1/T.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
VOCAB, DIM, HEADS, SEQ, BATCH = 50257, 64, 4, 64, 4


def load_example():
    path = os.path.join(ROOT, "examples/tiny_transformer/make_model.py")
    spec = importlib.util.spec_from_file_location("example", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    spec.loader.exec_module(module)
    module.VOCAB, module.DIM, module.HEADS, module.SEQ = VOCAB, DIM, HEADS, SEQ
    return module


def main():
    tools = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/bin")
    example = load_example()
    torch.manual_seed(0)
    model = example.TinyLM().eval()
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "model.onnx")
        torch.onnx.export(model, (ids,), onnx_path, input_names=["ids"], output_names=["logits"],
                          opset_version=17, do_constant_folding=False)
        whole = BATCH * SEQ * VOCAB * 4
        print(f"GPT-2 vocabulary {VOCAB}, dim {DIM}, batch {BATCH} x {SEQ} tokens; "
              f"one [batch, seq, vocab] f32 tensor: {whole / 2**20:.1f} MiB")
        print(f"{'tp':>3} {'activation peak per rank (MiB)':>32} {'vs tp=1':>8} "
              f"{'one vocab-wide f32 part (MiB)':>30}")
        base = None
        for tp in (1, 2, 4, 8):
            out = os.path.join(tmp, f"tp{tp}")
            cmd = [os.path.join(tools, "dtc-compile"), onnx_path, "-o", out, "--shapes-only"]
            if tp > 1:
                cmd += ["--mesh", f"tp={tp}"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(os.path.join(out, "report.json")) as f:
                peak = json.load(f)["memory_bytes_per_rank"]["activation_peak"]
            base = base or peak
            part = BATCH * SEQ * (-(-VOCAB // tp)) * 4
            print(f"{tp:>3} {peak / 2**20:>32.1f} {peak / base:>8.2f} {part / 2**20:>30.1f}")


if __name__ == "__main__":
    main()

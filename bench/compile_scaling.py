#!/usr/bin/env python3
"""Compile time against model depth: the whole training pipeline
(import, loss, autodiff, data parallelism, tensor and sequence parallelism,
AdamW, simplify) for the mesh dp=2,tp=2 with --sequence-parallel.

usage: bench/compile_scaling.py [BUILD_BIN_DIR]   (default build/bin)

Compiles the Llama-shaped models of 4, 8, 16 and 32 layers in
test/Import/ONNX/Inputs/scaling with `dtc-compile --shapes-only --mesh
dp=2,tp=2 --sequence-parallel`
(their weights are external data that does not exist, so every initializer,
the RoPE tables and the causal mask included, is a trained parameter here),
best of 5 runs each, and prints the times and t(32)/t(16), which should stay
near 2 (linear) and at most 2.3; the 32-layer compile must take under 10 s.
"""
import os
import sys
import tempfile

from scaling import run

tools = sys.argv[1] if len(sys.argv) > 1 else "build/bin"
with tempfile.TemporaryDirectory() as out:
    run(lambda model: [os.path.join(tools, "dtc-compile"), "--shapes-only", "--mesh", "dp=2,tp=2",
                       "--sequence-parallel", model, "-o", out], limit_32=10)

#!/usr/bin/env python3
"""Import time against model depth, in shape-only mode.

usage: bench/import_scaling.py [BUILD_BIN_DIR]   (default build/bin)

Imports the Llama-shaped models of 8, 16 and 32 layers in
test/Import/ONNX/Inputs/scaling (weights in external data that does not
exist) with `dtc-translate --import-onnx --shapes-only`, best of 5 runs
each, and prints the times and t(32)/t(16), which should stay near 2
(linear) and at most 2.3.
"""
import os
import sys

from scaling import run

tools = sys.argv[1] if len(sys.argv) > 1 else "build/bin"
run(lambda model: [os.path.join(tools, "dtc-translate"), "--import-onnx", "--shapes-only", model,
                   "-o", os.devnull])

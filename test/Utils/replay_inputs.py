#!/usr/bin/env python3
"""replay_inputs.py DTC_TRANSLATE DIR...

Imports every file in the DIRs (fuzzer corpora and crashers) and fails if
any import crashes (a signal or an exit status other than 0 or 1) or takes
longer than 60 seconds. Prints 'N inputs, M crashes'.
"""
import os
import subprocess
import sys

tool, dirs = sys.argv[1], sys.argv[2:]
files = sorted(os.path.join(d, f) for d in dirs if os.path.isdir(d) for f in os.listdir(d))
crashes = 0
for path in files:
    try:
        proc = subprocess.run([tool, "--import-onnx", path, "-o", os.devnull],
                              capture_output=True, timeout=60)
        bad = proc.returncode not in (0, 1)
    except subprocess.TimeoutExpired:
        bad = True
    if bad:
        crashes += 1
        print(f"CRASH {path}")
print(f"{len(files)} inputs, {crashes} crashes")
sys.exit(1 if crashes or not files else 0)

#!/usr/bin/env python3
"""resume_steps.py CHECKPOINT N -- COMMAND...

Runs COMMAND --resume CHECKPOINT --steps K+N, K the step CHECKPOINT's
latest records (a run stopped at a moment no test can know in advance,
resumed for N steps). Exits with COMMAND's exit status.
"""
import os
import subprocess
import sys


def main():
    split = sys.argv.index("--")
    checkpoint, more = sys.argv[1], int(sys.argv[2])
    with open(os.path.join(checkpoint, "latest")) as f:
        step_dir = os.path.join(checkpoint, f.read().strip())
    with open(os.path.join(step_dir, "state.txt")) as f:
        step = next(int(line.split()[1]) for line in f if line.startswith("step "))
    command = sys.argv[split + 1:] + ["--resume", checkpoint, "--steps", str(step + more)]
    sys.exit(subprocess.call(command))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""stop_rank.py RANK PATTERN -- COMMAND...

Runs COMMAND (an mpirun), echoes its output, and once a line of it contains
PATTERN sends SIGSTOP to the process of MPI rank RANK (a descendant of
COMMAND whose environment says OMPI_COMM_WORLD_RANK=RANK): a rank that
hangs. Prints how long COMMAND took to end after the stop, then exits 0
(the job is expected to fail); any process still stopped is killed.
"""
import os
import signal
import subprocess
import sys
import time


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def rank_process(root, rank):
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/environ", "rb") as env:
                variables = env.read().split(b"\0")
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in variables:
            return pid
    return None


def main():
    split = sys.argv.index("--")
    rank, pattern = int(sys.argv[1]), sys.argv[2]
    command = sys.argv[split + 1:]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    stopped, stopped_at = None, None
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if stopped is None and pattern in line:
            stopped = rank_process(process.pid, rank)
            if stopped is None:
                print(f"stop_rank.py: no process of rank {rank}", file=sys.stderr)
                process.kill()
                sys.exit(1)
            os.kill(stopped, signal.SIGSTOP)
            stopped_at = time.monotonic()
    process.wait()
    if stopped is None:
        print(f"stop_rank.py: no line contained {pattern!r}", file=sys.stderr)
        sys.exit(1)
    print(f"stop_rank.py: the job ended {time.monotonic() - stopped_at:.0f} s "
          f"after rank {rank} stopped")
    try:
        os.kill(stopped, signal.SIGKILL)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    main()

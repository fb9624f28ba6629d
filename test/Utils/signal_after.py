#!/usr/bin/env python3
"""signal_after.py PATTERN [--seconds S] [--any-status] [--kill] -- COMMAND...

Runs COMMAND, echoes its output, and sends it SIGTERM (SIGKILL with
--kill: a crash, nothing to clean up) once a line of its
output contains PATTERN (a progress line, say: no fixed sleep that a busy
machine could outrun), and at least S seconds after the start (mpirun
kills its ranks at once when told to stop that early). Exits with
COMMAND's exit status, or 0 with --any-status (mpirun, once signalled,
exits 1 however its ranks ended).
"""
import signal
import subprocess
import sys
import time


def main():
    split = sys.argv.index("--")
    pattern, command = sys.argv[1], sys.argv[split + 1:]
    options = sys.argv[2:split]
    seconds = float(options[options.index("--seconds") + 1]) if "--seconds" in options else 0
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    sent = False
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        if not sent and pattern in line and time.monotonic() - start >= seconds:
            process.send_signal(signal.SIGKILL if "--kill" in options else signal.SIGTERM)
            sent = True
    status = process.wait()
    if "--any-status" in options or "--kill" in options:
        status = 0
    if not sent:
        print(f"signal_after.py: no line contained {pattern!r}", file=sys.stderr)
        sys.exit(1)
    sys.exit(status)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# mpirun --oversubscribe with a session directory of its own. Open MPI keeps
# one top-level session directory per user and host under TMPDIR, and runs
# started at the same moment (lit and ctest run tests in parallel) can race
# creating it ("mkdir ... File exists", orte_init fails).
dir=$(mktemp -d "${TMPDIR:-/tmp}/dtc-mpirun.XXXXXX")
trap 'rm -rf "$dir"' EXIT
TMPDIR="$dir" mpirun --oversubscribe "$@" &
pid=$!
# A SIGTERM for this script is for mpirun, which forwards it to the ranks.
trap 'kill -TERM "$pid" 2>/dev/null' TERM
wait "$pid"
status=$?
# (A trapped signal ends the first wait early: wait for mpirun's exit.)
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  status=$?
done
exit "$status"

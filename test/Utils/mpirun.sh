#!/usr/bin/env bash
# mpirun --oversubscribe with a session directory of its own. Open MPI keeps
# one top-level session directory per user and host under TMPDIR, and runs
# started at the same moment (lit and ctest run tests in parallel) can race
# creating it ("mkdir ... File exists", orte_init fails).
dir=$(mktemp -d "${TMPDIR:-/tmp}/dtc-mpirun.XXXXXX")
trap 'rm -rf "$dir"' EXIT
TMPDIR="$dir" mpirun --oversubscribe "$@"

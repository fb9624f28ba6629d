#!/usr/bin/env bash
# remat_policies.sh TOOLS PYTHON FIXTURE OUT NP [dtc-compile flags...] -- POLICY...
#
# Compiles FIXTURE/model.onnx (with the dtc tools in TOOLS) with the given
# flags and --verify, once with --remat none and once per POLICY, trains
# each three steps on NP ranks (real mpirun) on FIXTURE/batch, on the
# reference executor and compiled for CPU ranks, and checks every policy's
# dumps (loss, gradients, parameters) against --remat none's bit for bit
# (compare_dumps.py), engine by engine. Prints per policy the activation
# peak the report plans, the peak rank 0 measured on each engine (the
# compiled one's arena is planned apart: it prints both), and the verdicts;
# fails if a comparison does.
set -euo pipefail
tools=$1 python=$2 fixture=$3 out=$4 np=$5
shift 5
flags=()
while [[ $1 != -- ]]; do flags+=("$1"); shift; done
shift
here=$(dirname "$0")
rm -rf "$out"
mkdir -p "$out"
for policy in none "$@"; do
  dir=$out/$policy
  "$tools/dtc-compile" "$fixture/model.onnx" -o "$dir" --verify "${flags[@]}" \
    --remat "$policy" 2> "$dir.err" || { cat "$dir.err"; exit 1; }
  planned=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['memory_bytes_per_rank']['activation_peak'])" "$dir/report.json")
  line="$policy: planned activation peak $planned B"
  for engine in reference compiled; do
    engine_flag=()
    [[ $engine == reference ]] && engine_flag=(--engine reference)
    "$here/mpirun.sh" -np "$np" "$tools/dtc-run" "$dir" "${engine_flag[@]}" \
      --batch "$fixture/batch" --steps 3 --dump "$dir/$engine" > "$dir.$engine.log"
    measured=$(grep -m1 -o "peak intermediate memory: .*" "$dir.$engine.log")
    line="$line; $engine $measured"
    if [[ $policy != none ]]; then
      verdict=$("$python" "$here/compare_dumps.py" "$out/none/$engine" "$dir/$engine") ||
        { echo "$line"; echo "$verdict"; exit 1; }
      line="$line, against none: $verdict"
    fi
  done
  echo "$line"
done

#!/usr/bin/env bash
# check_vjp_cases.sh TOOLS PYTHON CASES_DIR OUT CASE...
#
# For each CASE (a directory of make_vjp_cases.py: model.onnx, batch/, fd/),
# compiles the model with its scalar output as the loss, runs one step on
# the reference executor, and compares the dumped gradients with the finite
# differences in CASE/fd. Prints each comparison (and `FAIL CASE` where a
# step could not run); exits 1 if any fails.
set -uo pipefail
tools=$1 python=$2 cases=$3 out=$4
shift 4
status=0
for c in "$@"; do
  echo "case $c"
  if ! "$tools/dtc-compile" "$cases/$c/model.onnx" -o "$out/$c" --loss output:loss \
         --optimizer sgd --lr 0 --target reference --verify 2> "$out/$c.err" ||
     ! "$tools/dtc-run" "$out/$c" --batch "$cases/$c/batch" --steps 1 \
         --dump "$out/$c/dump" > "$out/$c.log" 2>&1; then
    cat "$out/$c.err" "$out/$c.log" 2> /dev/null
    echo "FAIL $c"
    status=1
    continue
  fi
  "$python" "$(dirname "$0")/../Integration/Inputs/vision/make_vjp_cases.py" check \
    "$out/$c/dump" "$cases/$c/fd" || status=1
done
exit $status

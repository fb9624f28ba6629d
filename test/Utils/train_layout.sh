#!/usr/bin/env bash
# train_layout.sh TOOLS PYTHON FIXTURE OUT NP [dtc-compile flags...]
#
# Compiles FIXTURE/model.onnx (with the dtc tools in TOOLS) with the training tests' flags and the given
# ones, trains three steps on NP ranks (real mpirun) on FIXTURE/batch, and
# compares the dumps with PyTorch's trajectory in FIXTURE/adamw
# (compare_training.py: loss 1e-5, gradients 1e-4, updates 1e-3 relative).
# The step is compiled for CPU ranks too (--target cpu) unless the flags
# say --target reference: it trains once on the reference executor
# (dtc-run --engine reference) and once compiled (dtc-launch), each
# compared with PyTorch, and the compiled run with the reference one by
# the same tolerances (docs/Codegen.md). With --target cuda, the compiled
# run is the CUDA kernels' emulated build on CPU ranks (--cuda-emulation,
# --emulate-cuda).
# Prints the layout, the compiler's warnings and each comparison's verdict;
# fails if any comparison does.
set -euo pipefail
tools=$1 python=$2 fixture=$3 out=$4 np=$5
shift 5
here=$(dirname "$0")
rm -rf "$out"
target=(--target cpu) run=()
[[ " $* " == *" --target reference "* ]] && target=()
[[ " $* " == *" --target cuda "* ]] && target=(--cuda-emulation) run=(--emulate-cuda)
"$tools/dtc-compile" "$fixture/model.onnx" -o "$out" --lr 0.01 --weight-decay 0.01 \
  --bucket-mb 0 --verify "${target[@]}" "$@" 2> "$out.err" || { cat "$out.err"; exit 1; }
echo "layout: $*"
grep -o "warning: .*" "$out.err" || true
"$here/mpirun.sh" -np "$np" "$tools/dtc-run" "$out" --engine reference \
  --batch "$fixture/batch" --steps 3 --dump "$out/dump" > "$out.log"
"$python" "$here/compare_training.py" "$out/dump" "$fixture/adamw" \
  "$fixture/initial" | tail -1
[ ${#target[@]} -eq 0 ] && exit 0
"$here/mpirun.sh" -np "$np" "$tools/dtc-run" "$out" "${run[@]}" \
  --batch "$fixture/batch" --steps 3 --dump "$out/dump-cpu" > "$out.cpu.log"
echo -n "compiled vs PyTorch: "
"$python" "$here/compare_training.py" "$out/dump-cpu" "$fixture/adamw" \
  "$fixture/initial" | tail -1
echo -n "compiled vs reference: "
"$python" "$here/compare_training.py" "$out/dump-cpu" "$out/dump" \
  "$fixture/initial" --mask-from "$fixture/adamw" | tail -1

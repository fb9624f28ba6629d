#!/usr/bin/env bash
# The CUDA target on a GPU, in two halves (GPU hosts have no LLVM to
# compile with, and GPU time is short):
#
#   scripts/gpu-check.sh --prepare DIR   (here, after scripts/build.sh)
#       compiles the checked models for --target cuda into DIR, with the
#       launcher (dtc-launch-cuda: needs only the driver and cuBLAS, which
#       it finds in the CUDA toolkit or PyTorch's nvidia wheels), their
#       batches, the reference executor's trajectories (--dump) and the
#       comparison script: DIR is all a GPU host needs.
#   scripts/gpu-check.sh [--smoke] DIR   (on the GPU host, from anywhere)
#       trains each model on the GPU and compares its losses, gradients
#       and updates with the reference trajectory (loss 1e-5, gradients
#       1e-4, updates 1e-3 relative: Utils/compare_training.py, f32; bf16
#       and fp16 within the bounds their training tests use);
#       --smoke: the example model for 3 steps only. $PYTHON (default
#       python3) runs the comparison: it needs numpy.
#
# Exits 77 (ctest's skip) when the host has no usable CUDA device, so that
# nothing GPU-only counts as passing without one.
set -euo pipefail

if [ "${1:-}" = "--prepare" ]; then
  dir=$(realpath -m "${2:?usage: gpu-check.sh --prepare DIR}")
  cd "$(dirname "$0")/.."
  bin=build/bin
  rm -rf "$dir" && mkdir -p "$dir/bin"
  cp "$bin/dtc-launch-cuda" "$bin/libdtc-launch-cuda-mpi.so" "$dir/bin/"
  cp test/Utils/compare_training.py "$dir/"
  prepare() { # NAME MODEL BATCH INITIAL MASK STEPS TOLERANCES [dtc-compile flags]
    local name=$1 model=$2 batch=$3 initial=$4 mask=$5 steps=$6 tolerances=$7
    shift 7
    "$bin/dtc-compile" "$model" -o "$dir/$name" --target cuda "$@" \
      2> "$dir/$name.compile.log" || { cat "$dir/$name.compile.log"; exit 1; }
    cp -r "$batch" "$dir/$name.batch"
    cp -r "$initial" "$dir/$name.initial"
    [ -n "$mask" ] && cp -r "$mask" "$dir/$name.mask"
    "$bin/dtc-run" "$dir/$name" --engine reference --batch "$batch" \
      --steps "$steps" --dump "$dir/$name.reference" > /dev/null
    echo "$name $steps $tolerances" >> "$dir/cases"
    echo "prepared $name ($(grep -o 'ptxas: .*' "$dir/$name.compile.log"))"
  }
  gpt2=test/Integration/Inputs/hf5/gpt2-names
  llama=test/Integration/Inputs/hf5/llama-names
  tiny=test/Integration/Inputs/tiny_transformer
  f32="" bf16="--loss-rtol 1.6e-2 --grad-rl2 0.1 --update-rl2 0.2"
  fp16="--loss-rtol 2e-3 --grad-rl2 2.5e-2 --update-rl2 0.1"
  prepare example examples/tiny_transformer/model.onnx "$tiny/batch" \
    "$tiny/initial" "$tiny/adamw" 3 "$f32" --lr 0.01
  prepare example-bf16 examples/tiny_transformer/model.onnx "$tiny/batch" \
    "$tiny/initial" "$tiny/adamw" 3 "$bf16" --lr 0.01 --precision bf16
  prepare example-fp16 examples/tiny_transformer/model.onnx "$tiny/batch" \
    "$tiny/initial" "$tiny/adamw" 3 "$fp16" --lr 0.01 --precision fp16
  prepare gpt2 "$gpt2/model.onnx" "$gpt2/batch" "$gpt2/initial" "$gpt2/adamw" 3 "$f32" --lr 0.01
  prepare llama "$llama/model.onnx" "$llama/batch" "$llama/initial" "$llama/adamw" 3 "$f32" --lr 0.01
  echo "prepared $dir: run scripts/gpu-check.sh [--smoke] $dir on a GPU host"
  exit 0
fi

smoke=0
if [ "${1:-}" = "--smoke" ]; then
  smoke=1
  shift
fi
dir=$(realpath "${1:?usage: gpu-check.sh [--smoke] DIR (made by --prepare)}")
python=${PYTHON:-python3} # (with numpy: PyTorch's, on a GPU host)
failed=0
while read -r name steps tolerances; do
  [ $smoke = 1 ] && [ "$name" != example ] && continue
  set +e
  "$dir/bin/dtc-launch-cuda" "$dir/$name" --batch "$dir/$name.batch" \
    --steps "$steps" --dump "$dir/$name.gpu" > "$dir/$name.gpu.log" 2>&1
  status=$?
  set -e
  if grep -q "no CUDA device" "$dir/$name.gpu.log"; then
    echo "skipped: $(grep -o 'error: .*' "$dir/$name.gpu.log")"
    exit 77
  fi
  if [ $status != 0 ]; then
    echo "$name: dtc-launch-cuda failed:"
    cat "$dir/$name.gpu.log"
    failed=1
    continue
  fi
  mask=()
  [ -d "$dir/$name.mask" ] && mask=(--mask-from "$dir/$name.mask")
  echo -n "$name on the GPU vs the reference executor: "
  "$python" "$dir/compare_training.py" "$dir/$name.gpu" "$dir/$name.reference" \
    "$dir/$name.initial" "${mask[@]}" $tolerances | tail -1 | tee "$dir/$name.verdict"
  grep -q "^0 failed" "$dir/$name.verdict" || failed=1
  grep -E "ms/step|tokens/s" "$dir/$name.gpu.log" | tail -2
done < "$dir/cases"
exit $failed

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
#   scripts/gpu-check.sh --prepare DIR --full
#       also the benchmark models of bench/step_models.py, compiled from
#       their shapes (their weights are drawn on the GPU host:
#       --init-random): medium_gpt (f32) and gpu_gpt (bf16, d 2048, 16
#       heads, 6 layers, sequence 2048, vocabulary 32768, batch 8: 0.37B
#       parameters), with bench/gpu_baselines.py, PyTorch's side.
#   scripts/gpu-check.sh [--smoke|--full] DIR   (on the GPU host)
#       trains each model on the GPU and compares its losses, gradients
#       and updates with the reference trajectory (loss 1e-5, gradients
#       1e-4, updates 1e-3 relative: Utils/compare_training.py, f32; bf16
#       and fp16 within the bounds their training tests use);
#       --smoke: the example in f32 and bf16 and the fused attention's
#       Llama only (each 3 steps); --full: then
#       compute-sanitizer's memcheck and racecheck on the example (where
#       the host has it), and each benchmark model's step time, tokens/s
#       and MFU beside PyTorch eager and torch.compile's
#       max-autotune-no-cudagraphs and reduce-overhead on the same GPU,
#       with dtc's 12 slowest thunks (--profile: the GEMMs' and fused
#       attention's TFLOP/s), and the largest GEMM and the fused
#       attention's shapes timed alone in PyTorch (cuBLASLt, SDPA's flash
#       backend). $PYTHON (default
#       python3) runs the comparison (numpy) and the baselines (torch).
#
# Exits 77 (ctest's skip) when the host has no usable CUDA device, so that
# nothing GPU-only counts as passing without one.
set -euo pipefail

if [ "${1:-}" = "--prepare" ]; then
  dir=$(realpath -m "${2:?usage: gpu-check.sh --prepare DIR [--full]}")
  full=0
  [ "${3:-}" = "--full" ] && full=1
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
  # The fused attention kernels (head dimension 128 with grouped heads; a
  # boolean causal mask with dropout) against the reference executor's
  # f64 attention, within the bounds test/Target/compiled-cuda.mlir uses;
  # the GPT's f32 step tells which gradients are zero in exact arithmetic.
  flash=test/Integration/Inputs/flash
  fused="--loss-rtol 1e-3 --grad-rl2 5e-2 --update-rl2 0.2"
  prepare flash-llama "$flash/llama/model.onnx" "$flash/llama/task" \
    "$flash/llama/initial" "" 3 "$fused" --lr 0.01 --precision bf16 --freeze '^rope_'
  "$bin/dtc-compile" "$flash/gpt/model.onnx" -o "$dir/flash-gpt-f32" --lr 0.01 \
    --dropout --seed 7 2> /dev/null
  "$bin/dtc-run" "$dir/flash-gpt-f32" --batch "$flash/gpt/task" --steps 3 \
    --dump "$dir/flash-gpt-f32.dump" > /dev/null
  prepare flash-gpt "$flash/gpt/model.onnx" "$flash/gpt/task" "$flash/gpt/initial" \
    "$dir/flash-gpt-f32.dump" 3 "$fused" --lr 0.01 --precision bf16 --dropout --seed 7
  if [ $full = 1 ]; then
    # name, precision: compiled from shapes (bench/step_models.py
    # --shapes-only), trained from --init-random.
    cp bench/gpu_baselines.py bench/step_models.py "$dir/"
    python=/usr/bin/python3 # (Debian's torch 1.13 exports)
    for model in "medium_gpt f32" "gpu_gpt bf16"; do
      set -- $model
      "$python" bench/step_models.py "$1" "$dir/$1.model" --shapes-only \
        2> "$dir/$1.export.log" || { cat "$dir/$1.export.log"; exit 1; }
      shape=$("$python" -c "import numpy; print('x'.join(map(str, numpy.load('$dir/$1.model/task/ids.npy').shape)))")
      precision=()
      [ "$2" = bf16 ] && precision=(--precision bf16)
      "$bin/dtc-compile" "$dir/$1.model/model.onnx" -o "$dir/$1" --shapes-only \
        --input-shape "ids=$shape" --lr 1e-4 --target cuda "${precision[@]}" \
        2> "$dir/$1.compile.log" || { cat "$dir/$1.compile.log"; exit 1; }
      echo "$1 $2" >> "$dir/benchmarks"
      echo "prepared $1 ($2, ids $shape; $(grep -o 'ptxas: .*' "$dir/$1.compile.log"))"
    done
  fi
  echo "prepared $dir: run scripts/gpu-check.sh [--smoke|--full] $dir on a GPU host"
  exit 0
fi

smoke=0 full=0
case "${1:-}" in
--smoke) smoke=1 && shift ;;
--full) full=1 && shift ;;
esac
dir=$(realpath "${1:?usage: gpu-check.sh [--smoke] DIR (made by --prepare)}")
python=${PYTHON:-python3} # (with numpy: PyTorch's, on a GPU host)
failed=0
while read -r name steps tolerances; do
  # (--smoke: generated kernels and f32 GEMMs, bf16 GEMMs on tensor
  # cores, the fused attention kernels.)
  [ $smoke = 1 ] && [[ ! "$name" =~ ^(example|example-bf16|flash-llama)$ ]] && continue
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
[ $full = 1 ] || exit $failed

if [ ! -f "$dir/benchmarks" ]; then
  echo "--full: $dir holds no benchmark models (prepare it with --full)"
  exit 1
fi
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    echo -n "compute-sanitizer --tool $tool on the example: "
    compute-sanitizer --tool $tool --error-exitcode 1 "$dir/bin/dtc-launch-cuda" \
      "$dir/example" --batch "$dir/example.batch" --steps 2 \
      > "$dir/example.$tool.log" 2>&1 && echo "no errors" ||
      { echo "errors:"; grep -m 20 "=========" "$dir/example.$tool.log"; failed=1; }
  done
else
  echo "compute-sanitizer: not on this host, not run"
fi
while read -r name precision; do
  echo "== $name ($precision) =="
  set +e
  "$dir/bin/dtc-launch-cuda" "$dir/$name" --batch "$dir/$name.model/task" \
    --init-random 1 --steps 12 --profile 12 > "$dir/$name.gpu.log" 2>&1
  status=$?
  set -e
  [ $status = 0 ] || { echo "dtc-launch-cuda failed:"; tail -20 "$dir/$name.gpu.log"; failed=1; continue; }
  sed -n '/^profile:/,/^step/p' "$dir/$name.gpu.log" | grep -v "^step"
  tokens=$(grep -o "throughput: [0-9.]*" "$dir/$name.gpu.log" | tail -1 | cut -d' ' -f2)
  "$python" "$dir/gpu_baselines.py" "$name" --precision "$precision" \
    --dtc-tokens-per-s "$tokens" || failed=1
done < "$dir/benchmarks"
# gpu_gpt's largest GEMM (the tied head: 16384 tokens x 2048 x 32768) and
# its attention (8 x 16 heads x 2048 tokens x 128).
"$python" "$dir/gpu_baselines.py" --gemm 16384 32768 2048 --attention 8 16 2048 128 || failed=1
exit $failed

#!/usr/bin/env bash
# The main job: install what is needed, build, then
#  1. import the shipped example model (a one-block transformer exported by
#     PyTorch), run it on the reference executor and compare its outputs
#     with PyTorch's;
#  2. compile it into a training step (cross-entropy, AdamW, warm-up +
#     cosine schedule) and into native code for CPU ranks (--target cpu),
#     train it for 300 steps on a small synthetic task (predict the next
#     token of a counting sequence), printing the loss and tokens/s, and
#     check the compiled run's losses against the reference executor's;
#  3. compile it again for a 4-rank mesh, dp=2 x tp=2 with sequence
#     parallelism (each dp group takes half the batch; each tp pair splits
#     the weights Megatron-style and the norms along the sequence), train
#     the compiled program on four MPI ranks, printing the loss and the
#     per-rank report (time, collectives, memory, tokens/s), and check that
#     its losses match the single-device run's;
#  4. train the single-device program from a token file (--data: windows
#     of a counting sequence, nanoGPT's raw uint16 format), once for 300
#     steps and once for 150 steps with a checkpoint (--save) resumed to
#     300 (--resume), evaluating on a held-out file (--eval-data: the
#     counting sequence from an offset no training window starts at, so
#     its loss stays above the training loss) and writing metrics, and
#     check that the resumed run is bit-identical.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh dtc-translate dtc-run dtc-compile dtc-launch

example=examples/tiny_transformer
out=build/example
mkdir -p "$out"
echo "== Importing $example/model.onnx"
build/bin/dtc-translate --import-onnx "$example/model.onnx" -o "$out/model.mlir"
echo "   $(grep -c ' = dtc\.' "$out/model.mlir") dtc ops, IR in $out/model.mlir"
echo "== Running it on the reference executor (batch: $example/data)"
build/bin/dtc-run "$out/model.mlir" --inputs "$example/data" --outputs "$out/outputs"
echo "== Comparing with PyTorch's output"
/usr/bin/python3 test/Utils/compare_npy.py "$out/outputs/logits.npy" \
  "$example/data/expected/logits.npy" --rtol 1e-5 --atol 1e-5 --rel-l2 1e-5

train_options=(--lr 3e-3 --schedule warmup-cosine --warmup-steps 20
  --total-steps 300 --no-decay 'bias|ln')
echo "== Compiling the training step, into native code for CPU ranks"
build/bin/dtc-compile "$example/model.onnx" -o "$out/train" "${train_options[@]}" \
  --target cpu
echo "== Training for 300 steps on $example/task (single device, compiled)"
build/bin/dtc-run "$out/train" --batch "$example/task" --steps 300 --log-every 25 \
  --dump "$out/train-dump"
echo "   losses, last gradients and final parameters in $out/train-dump"
echo "== The same 300 steps on the reference executor (the oracle, f64)"
build/bin/dtc-run "$out/train" --engine reference --batch "$example/task" \
  --steps 300 --log-every 100 --dump "$out/train-dump-reference"
echo "== Comparing the compiled losses with the reference executor's"
/usr/bin/python3 test/Utils/compare_npy.py "$out/train-dump/loss.npy" \
  "$out/train-dump-reference/loss.npy" --rtol 1e-4 --atol 1e-5 --rel-l2 1e-5

echo "== Compiling it for a mesh of 4 ranks: dp=2 x tp=2, sequence-parallel,"
echo "   checked against one device on simulated ranks first (--verify)"
build/bin/dtc-compile "$example/model.onnx" -o "$out/train-mesh" "${train_options[@]}" \
  --mesh dp=2,tp=2 --sequence-parallel --verify --target cpu
echo "== Training for 300 steps on 4 MPI ranks (compiled)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpirun --oversubscribe -np 4 build/bin/dtc-run "$out/train-mesh" \
  --batch "$example/task" --steps 300 --log-every 25 --dump "$out/train-mesh-dump"
echo "== Comparing the 4-rank losses with the single-device run's"
/usr/bin/python3 test/Utils/compare_npy.py "$out/train-mesh-dump/loss.npy" \
  "$out/train-dump/loss.npy" --rtol 1e-4 --atol 1e-5 --rel-l2 1e-5

echo "== Training from a token file (a counting sequence, raw uint16):"
echo "   300 steps, then 150 + a checkpoint + a resume to 300"
/usr/bin/python3 -c "import numpy as n; (n.arange(20001) % 64).astype(n.uint16).tofile('$out/tokens.bin'); ((n.arange(4001) + 17) % 64).astype(n.uint16).tofile('$out/eval.bin')"
rm -rf "$out/ckpt" "$out/metrics.jsonl"
build/bin/dtc-run "$out/train" --data "$out/tokens.bin" --steps 300 --log-every 100 \
  --eval-data "$out/eval.bin" --eval-every 100 --dump "$out/data-full"
build/bin/dtc-run "$out/train" --data "$out/tokens.bin" --steps 150 --log-every 150 \
  --save "$out/ckpt"
build/bin/dtc-run "$out/train" --data "$out/tokens.bin" --steps 300 --log-every 50 \
  --resume "$out/ckpt" --eval-data "$out/eval.bin" --metrics "$out/metrics.jsonl" \
  --dump "$out/data-resumed"
echo "   per-step metrics (JSON lines) in $out/metrics.jsonl; the last:"
tail -1 "$out/metrics.jsonl"
echo "== Comparing the resumed run with the uninterrupted one (bit for bit)"
/usr/bin/python3 test/Utils/compare_resumed.py "$out/data-full" "$out/data-resumed" \
  --from 150 --exact | tail -1

#!/usr/bin/env bash
# The main job: install what is needed, build, import the shipped example
# model (a one-block transformer exported by PyTorch), run it on the
# reference executor and print its outputs, then compare them with the
# outputs PyTorch computed for the same batch.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh dtc-translate dtc-run

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
  "$example/data/expected/logits.npy" --rtol 1e-4 --atol 1e-5

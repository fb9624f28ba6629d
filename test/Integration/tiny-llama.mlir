// The Llama-style example end to end: imported (RoPE tables as frozen-able
// parameters, the -inf causal mask as a constant, GQA's expand/reshape and
// the tied head) and run, matching PyTorch's output.
// RUN: dtc-translate --import-onnx %S/../../examples/tiny_llama/model.onnx -o %t.mlir
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: dtc-run %t.mlir --inputs %S/../../examples/tiny_llama/data --outputs %t.out
// RUN: %python %S/../Utils/compare_npy.py %t.out/logits.npy %S/../../examples/tiny_llama/data/expected/logits.npy --rtol 1e-5 --atol 1e-5 --rel-l2 1e-5
// IR: {dtc.param = "rope_cos"
// IR-NOT: dtc.param = "causal_mask"
// IR: dtc.param = "embed.weight"

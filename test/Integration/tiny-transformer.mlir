// The shipped example end to end: import the PyTorch-exported transformer,
// run it on the reference executor, and compare with PyTorch's own output.
// RUN: dtc-translate --import-onnx %S/../../examples/tiny_transformer/model.onnx -o %t.mlir
// RUN: dtc-run %t.mlir --inputs %S/../../examples/tiny_transformer/data --outputs %t.out | FileCheck %s
// RUN: %python %S/../Utils/compare_npy.py %t.out/logits.npy %S/../../examples/tiny_transformer/data/expected/logits.npy --rtol 1e-5 --atol 1e-5 --rel-l2 1e-5
// CHECK: logits: 2x8x64xf32 =

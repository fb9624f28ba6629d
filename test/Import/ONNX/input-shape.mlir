// --input-shape binds symbolic dimensions (and may replace static ones).
// RUN: dtc-translate --import-onnx %S/Inputs/symbolic_dim.onnx --input-shape x=3x4 | FileCheck %s
// CHECK: func.func @forward(%{{.*}}: tensor<3x4xf32> {dtc.input = "x"}) -> (tensor<3x4xf32> {dtc.output = "y"})
// RUN: not dtc-translate --import-onnx %S/Inputs/symbolic_dim.onnx 2>&1 | FileCheck %s --check-prefix=UNBOUND
// UNBOUND: error: graph input 'x' has symbolic dimension 'batch'; dtc compiles static shapes: give its shape with --input-shape x=... or bind it from a batch (--bind-inputs DIR holding x.npy)
// RUN: not dtc-translate --import-onnx %S/Inputs/symbolic_dim.onnx --input-shape x=3 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: --input-shape gives 'x' rank 1 but the model declares rank 2
// RUN: not dtc-translate --import-onnx %S/Inputs/symbolic_dim.onnx --input-shape x=3y 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error: bad --input-shape 'x=3y' (expected NAME=DxDx..., e.g. ids=8x16)
// A shape the graph's own constants contradict fails at the node:
// RUN: not dtc-translate --import-onnx %S/../../../examples/tiny_transformer/model.onnx --input-shape ids=1x8 2>&1 | FileCheck %s --check-prefix=BAKED
// BAKED: error: Reshape node '/block/Reshape': cannot reshape 'tensor<1x8x32xf32>' to the requested shape (element counts differ)

// RUN: dtc-translate --import-onnx %S/Inputs/dynamic_reshape.onnx --bind-inputs %S/Inputs/bind_shape | FileCheck %s
// RUN: not dtc-translate --import-onnx %S/Inputs/dynamic_reshape.onnx 2>&1 | FileCheck %s --check-prefix=UNBOUND

// A graph input that determines a shape is folded in when bound; the data
// input stays an argument.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32> {dtc.input = "x"}) -> (tensor<3x2xf32> {dtc.output = "y"})
// CHECK-NEXT: %[[Y:.*]] = dtc.reshape %[[X]] : tensor<2x3xf32> to tensor<3x2xf32>
// CHECK-NEXT: return %[[Y]]

// UNBOUND: error: Reshape node '/reshape': its shape operand ('shape') determines a shape and must be a constant; dtc compiles static shapes (bind graph inputs with --bind-inputs)

// A bound value must fit the declared type of its input.
// RUN: not dtc-translate --import-onnx %S/Inputs/dynamic_reshape.onnx --bind-inputs %S/Inputs/bind_bad_shape 2>&1 | FileCheck %s --check-prefix=MISFIT
// MISFIT: error: bound value of 'x' is 3x3xf32, which does not fit the model's declared type

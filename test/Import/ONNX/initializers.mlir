// RUN: dtc-translate --import-onnx %S/Inputs/masked.onnx | FileCheck %s

// A non-finite initializer (a -inf causal mask) is folded in as a constant
// instead of becoming a trainable parameter.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: tensor<3x3xf32> {dtc.input = "x"}) -> (tensor<3x3xf32> {dtc.output = "y"})
// CHECK: %[[MASK:.*]] = dtc.constant dense<{{\[}}[0.000000e+00, 0xFF800000, 0xFF800000]
// CHECK: dtc.add %[[X]], %[[MASK]]

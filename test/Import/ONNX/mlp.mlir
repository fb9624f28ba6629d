// RUN: dtc-translate --import-onnx %S/Inputs/mlp.onnx | FileCheck %s
// RUN: dtc-translate --import-onnx %S/Inputs/mlp.onnx -o %t.mlir
// RUN: dtc-run %t.mlir --inputs %S/Inputs/mlp_data --outputs %t.out | FileCheck %s --check-prefix=EXEC
// RUN: %python %S/../../Utils/compare_npy.py %t.out/probs.npy %S/Inputs/mlp_data/expected/probs.npy

// A Gemm/Relu/MatMul/Reshape/Softmax model: float initializers become
// parameter arguments carrying their values, the int64 shape initializer is
// folded into the reshape, and ONNX names survive as dtc.input/dtc.output.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32> {dtc.input = "x"},
// CHECK-SAME: %[[W1:.*]]: tensor<8x4xf32> {dtc.param = "fc1.weight", dtc.unit = "fc1", dtc.value = dense_resource<fc1.weight> : tensor<8x4xf32>},
// CHECK-SAME: %[[B1:.*]]: tensor<8xf32> {dtc.param = "fc1.bias", dtc.unit = "fc1", dtc.value = dense_resource<fc1.bias> : tensor<8xf32>},
// CHECK-SAME: %[[W2:.*]]: tensor<8x6xf32> {dtc.param = "fc2.weight", dtc.unit = "fc2", dtc.value = dense_resource<fc2.weight> : tensor<8x6xf32>})
// CHECK-SAME: -> (tensor<2x3x2xf32> {dtc.output = "probs"})
// CHECK:      %[[MM:.*]] = dtc.matmul %[[X]], %[[W1]] transpose_rhs
// CHECK:      %[[H:.*]] = dtc.add %[[MM]], %[[B1]]
// CHECK:      %[[A:.*]] = dtc.relu %[[H]]
// CHECK:      %[[Z:.*]] = dtc.matmul %[[A]], %[[W2]]
// CHECK:      %[[R:.*]] = dtc.reshape %[[Z]] : tensor<2x6xf32> to tensor<2x3x2xf32>
// CHECK:      %[[P:.*]] = dtc.softmax %[[R]] dim = 2
// CHECK:      return %[[P]]
// CHECK-NOT:  dtc.constant
// CHECK:      dialect_resources
// CHECK:      fc1.weight: "0x

// EXEC: probs: 2x3x2xf32 =

// Every op is located at the ONNX value it computes, within its node.
// RUN: dtc-translate --import-onnx %S/Inputs/mlp.onnx --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// LOC: dtc.relu %{{.*}} loc([[RELU:#loc[0-9]+]])
// LOC: [[NODE:#loc[0-9]+]] = loc("/act/Relu"(
// LOC: [[RELU]] = loc("a"([[NODE]]))

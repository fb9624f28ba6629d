// RUN: dtc-opt %s --dtc-send-filled-rows | FileCheck %s

// The exchanges of sorted experts' buffers [experts, rows, d] over ep, in
// either direction, send their filled rows only; an exchange over another
// axis, or between other dimensions, is left whole.
// CHECK-LABEL: func.func @exchanges(
// CHECK: dtc.all_to_all %{{.*}} split_dim = 0 concat_dim = 1 {rows_dim = 1 : i64} : tensor<4x28x32xf32> -> tensor<2x56x32xf32>
// CHECK: dtc.all_to_all %{{.*}} split_dim = 1 concat_dim = 0 {rows_dim = 1 : i64} : tensor<2x56x32xf32> -> tensor<4x28x32xf32>
// CHECK: dtc.all_to_all %{{.*}} axes = ["tp"] split_dim = 0 concat_dim = 1 : tensor<4x28x32xf32> -> tensor<2x56x32xf32>
// CHECK: dtc.all_to_all %{{.*}} axes = ["ep"] split_dim = 0 concat_dim = 2 : tensor<4x28x32xf32> -> tensor<2x28x64xf32>
dtc.mesh @mesh ["tp" = 2, "ep" = 2]
func.func @exchanges(%buffers: tensor<4x28x32xf32>) -> (tensor<4x28x32xf32>, tensor<2x56x32xf32>, tensor<2x28x64xf32>) {
  %0 = dtc.all_to_all %buffers on @mesh axes = ["ep"] split_dim = 0 concat_dim = 1 : tensor<4x28x32xf32> -> tensor<2x56x32xf32>
  %1 = dtc.all_to_all %0 on @mesh axes = ["ep"] split_dim = 1 concat_dim = 0 : tensor<2x56x32xf32> -> tensor<4x28x32xf32>
  %2 = dtc.all_to_all %buffers on @mesh axes = ["tp"] split_dim = 0 concat_dim = 1 : tensor<4x28x32xf32> -> tensor<2x56x32xf32>
  %3 = dtc.all_to_all %buffers on @mesh axes = ["ep"] split_dim = 0 concat_dim = 2 : tensor<4x28x32xf32> -> tensor<2x28x64xf32>
  return %1, %2, %3 : tensor<4x28x32xf32>, tensor<2x56x32xf32>, tensor<2x28x64xf32>
}

// RUN: dtc-opt %s --canonicalize | FileCheck %s

// The dtc folders: no-op reshapes, transposes, broadcasts and casts vanish;
// reshapes of constants and broadcasts of splats become constants.

// CHECK-LABEL: func @noops
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @noops(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK-NOT: dtc.
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[X]]
  %0 = dtc.reshape %x : tensor<2x3xf32> to tensor<2x3xf32>
  %1 = dtc.transpose %x permutation = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = dtc.broadcast %x : tensor<2x3xf32> to tensor<2x3xf32>
  %3 = dtc.cast %x : tensor<2x3xf32> to tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func @keeps_real_work
func.func @keeps_real_work(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  // CHECK: dtc.reshape
  // CHECK: dtc.transpose
  %0 = dtc.reshape %x : tensor<2x3xf32> to tensor<3x2xf32>
  %1 = dtc.transpose %x permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0, %1 : tensor<3x2xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<3x2xi64>, tensor<4x3xf32>) {
  // CHECK-DAG: dtc.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  // CHECK-DAG: dtc.constant dense<5.000000e-01> : tensor<4x3xf32>
  // CHECK-NOT: dtc.reshape
  // CHECK-NOT: dtc.broadcast
  %c = dtc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = dtc.reshape %c : tensor<2x3xi64> to tensor<3x2xi64>
  %s = dtc.constant dense<0.5> : tensor<3xf32>
  %1 = dtc.broadcast %s : tensor<3xf32> to tensor<4x3xf32>
  return %0, %1 : tensor<3x2xi64>, tensor<4x3xf32>
}

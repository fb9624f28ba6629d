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

// An iota varies along its dimension only: it is made thin and broadcast.
// An op that broadcasts its operands itself reads a broadcast's input when
// its result stays the same; a broadcast another reader needs stays.
// CHECK-LABEL: func @thin_iota
// CHECK-SAME: (%[[LABELS:.*]]: tensor<2x4x1xi64>, %[[G:.*]]: tensor<2x4x1xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[ZERO:.*]] = dtc.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[I:.*]] = dtc.iota dim = 2 : tensor<1x1x8xi64>
// CHECK: %[[HOT:.*]] = dtc.compare eq, %[[I]], %[[LABELS]] : (tensor<1x1x8xi64>, tensor<2x4x1xi64>) -> tensor<2x4x8xi1>
// CHECK: %[[P:.*]] = dtc.select %[[HOT]], %[[G]], %[[ZERO]] : (tensor<2x4x8xi1>, tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x8xf32>
// CHECK: %[[B:.*]] = dtc.broadcast %[[W]] : tensor<4xf32> to tensor<2x4xf32>
// CHECK: %[[S:.*]] = dtc.add %[[W]], %[[B]] : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: return %[[P]], %[[S]], %[[B]]
func.func @thin_iota(%labels: tensor<2x4x1xi64>, %g: tensor<2x4x1xf32>, %w: tensor<4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = dtc.constant dense<0.0> : tensor<f32>
  %classes = dtc.iota dim = 2 : tensor<2x4x8xi64>
  %hot = dtc.compare eq, %classes, %labels : (tensor<2x4x8xi64>, tensor<2x4x1xi64>) -> tensor<2x4x8xi1>
  %wide = dtc.broadcast %g : tensor<2x4x1xf32> to tensor<2x4x8xf32>
  %picked = dtc.select %hot, %wide, %zero : (tensor<2x4x8xi1>, tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  // Both operands broadcast: one is read unexpanded, the other keeps the
  // result's shape.
  %b = dtc.broadcast %w : tensor<4xf32> to tensor<2x4xf32>
  %s = dtc.add %b, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %picked, %s, %b : tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A float widened and cast back is itself; a narrowing in between is not.
// CHECK-LABEL: func @round_trips
// CHECK-SAME: (%[[X:.*]]: tensor<4xbf16>, %[[Y:.*]]: tensor<4xf32>)
// CHECK: %[[N:.*]] = dtc.cast %[[Y]] : tensor<4xf32> to tensor<4xbf16>
// CHECK: %[[W:.*]] = dtc.cast %[[N]] : tensor<4xbf16> to tensor<4xf32>
// CHECK: return %[[X]], %[[W]]
func.func @round_trips(%x: tensor<4xbf16>, %y: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %wide = dtc.cast %x : tensor<4xbf16> to tensor<4xf32>
  %back = dtc.cast %wide : tensor<4xf32> to tensor<4xbf16>
  %narrow = dtc.cast %y : tensor<4xf32> to tensor<4xbf16>
  %again = dtc.cast %narrow : tensor<4xbf16> to tensor<4xf32>
  return %back, %again : tensor<4xbf16>, tensor<4xf32>
}

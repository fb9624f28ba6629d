// RUN: dtc-opt %s --dtc-autodiff --dtc-gradient-accumulation=microbatches=2 --split-input-file --verify-diagnostics | FileCheck %s

// Two microbatches of two rows run one after the other, each its forward
// and backward; the loss and the gradient are added after the second, and
// no collective or mesh is left behind.
// CHECK-NOT: dtc.mesh
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32> {dtc.input = "x"}, %[[W:.*]]: tensor<3x2xf32> {dtc.param = "w"})
// The step records its microbatches (dtc-zero reads them).
// CHECK-SAME: attributes {dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2>}
// CHECK-DAG: %[[X0:.*]] = dtc.slice %[[X]] starts = [0, 0] sizes = [2, 3] strides = [1, 1]
// CHECK-DAG: %[[X1:.*]] = dtc.slice %[[X]] starts = [2, 0] sizes = [2, 3] strides = [1, 1]
// CHECK: %[[Y0:.*]] = dtc.matmul %[[X0]], %[[W]]
// CHECK: %[[L0:.*]] = dtc.reduce_sum
// CHECK: %[[G0:.*]] = dtc.matmul %[[X0]], %{{.*}} transpose_lhs
// CHECK: %[[Y1:.*]] = dtc.matmul %[[X1]], %[[W]]
// CHECK: %[[L1:.*]] = dtc.reduce_sum
// CHECK: %[[G1:.*]] = dtc.matmul %[[X1]], %{{.*}} transpose_lhs
// CHECK: %[[L:.*]] = dtc.add %[[L0]], %[[L1]]
// CHECK: %[[G:.*]] = dtc.add %[[G0]], %[[G1]]
// CHECK: return %[[L]], %[[G]]
// CHECK-NOT: dtc.all_reduce
func.func @linear(%x: tensor<4x3xf32> {dtc.input = "x"}, %w: tensor<3x2xf32> {dtc.param = "w"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %sq = dtc.mul %y, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A mean over the batch divides by a count that only the whole batch has:
// every microbatch's part of it is summed before either backward uses it.
// CHECK-LABEL: func.func @mean_of_squares(
// CHECK-DAG: %[[WEIGHTS0:.*]] = dtc.slice %arg1 starts = [0]
// CHECK-DAG: %[[WEIGHTS1:.*]] = dtc.slice %arg1 starts = [2]
// CHECK: %[[N0:.*]] = dtc.reduce_sum %[[WEIGHTS0]] dims = [0] : tensor<2xf32> -> tensor<f32>
// CHECK: %[[N1:.*]] = dtc.reduce_sum %[[WEIGHTS1]] dims = [0] : tensor<2xf32> -> tensor<f32>
// CHECK: %[[N:.*]] = dtc.add %[[N0]], %[[N1]]
// CHECK: dtc.div %{{.*}}, %[[N]]
// CHECK: return
func.func @mean_of_squares(%x: tensor<4xf32> {dtc.input = "x"}, %weights: tensor<4xf32> {dtc.input = "weights"},
                           %w: tensor<f32> {dtc.param = "w"}) -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.mul %x, %w : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %sq = dtc.mul %y, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %ws = dtc.mul %sq, %weights : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %num = dtc.reduce_sum %ws dims = [0] : tensor<4xf32> -> tensor<f32>
  %den = dtc.reduce_sum %weights dims = [0] : tensor<4xf32> -> tensor<f32>
  %l = dtc.div %num, %den : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{input 'x' of type 'tensor<3x2xf32>': its batch (dimension 0) does not divide over 2 gradient accumulation shards}}
func.func @odd_batch(%x: tensor<3x2xf32> {dtc.input = "x"}, %w: tensor<2xf32> {dtc.param = "w"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.mul %x, %w : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %l = dtc.reduce_sum %y dims = [0, 1] : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// dtc-fold-into-matmuls: transposes and batch sums around matmuls become
// the matmuls' own (a GEMM reads either operand transposed at no cost).
// RUN: dtc-opt %s --dtc-fold-into-matmuls -split-input-file | FileCheck %s

// A Linear's `x @ W.T` forward and its two backward products, as autodiff
// writes them: the weight's transpose is read by the forward (transposed
// back by the flag) and by the input's gradient (a transpose of a
// transpose: no flag); the weight's gradient, summed over the batch and
// transposed back to [out, in], is one product of the tokens of the whole
// batch, written in the weight's layout.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: dtc.transpose
// CHECK: %[[Y:.*]] = dtc.matmul %arg0, %arg1 transpose_rhs : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
// CHECK: %[[DX:.*]] = dtc.matmul %arg2, %arg1 : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
// CHECK-DAG: %[[G:.*]] = dtc.reshape %arg2 : tensor<2x3x5xf32> to tensor<6x5xf32>
// CHECK-DAG: %[[X:.*]] = dtc.reshape %arg0 : tensor<2x3x4xf32> to tensor<6x4xf32>
// CHECK: %[[DW:.*]] = dtc.matmul %[[G]], %[[X]] transpose_lhs : (tensor<6x5xf32>, tensor<6x4xf32>) -> tensor<5x4xf32>
// CHECK-NOT: dtc.reduce_sum
// CHECK: return %[[Y]], %[[DX]], %[[DW]]
func.func @linear(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %g: tensor<2x3x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x4xf32>, tensor<5x4xf32>) {
  %wt = dtc.transpose %w permutation = [1, 0] : tensor<5x4xf32> -> tensor<4x5xf32>
  %y = dtc.matmul %x, %wt : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %dx = dtc.matmul %g, %wt transpose_rhs : (tensor<2x3x5xf32>, tensor<4x5xf32>) -> tensor<2x3x4xf32>
  %p = dtc.matmul %x, %g transpose_lhs : (tensor<2x3x4xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %s = dtc.reduce_sum %p dims = [0] keep_dims : tensor<2x4x5xf32> -> tensor<1x4x5xf32>
  %r = dtc.reshape %s : tensor<1x4x5xf32> to tensor<4x5xf32>
  %dw = dtc.transpose %r permutation = [1, 0] : tensor<4x5xf32> -> tensor<5x4xf32>
  return %y, %dx, %dw : tensor<2x3x5xf32>, tensor<2x3x4xf32>, tensor<5x4xf32>
}

// -----

// What stays: a transpose of other dimensions than the last two (heads), a
// product something else reads too, a sum over other dimensions than the
// batch, and a product whose operands broadcast over the batch.
// CHECK-LABEL: func.func @kept
// CHECK: dtc.transpose %arg0 permutation = [0, 2, 1, 3]
// CHECK: %[[P:.*]] = dtc.matmul
// CHECK: dtc.transpose %[[P]]
// CHECK: %[[Q:.*]] = dtc.matmul %arg1, %arg1 transpose_lhs
// CHECK: dtc.reduce_sum %[[Q]] dims = [1]
// CHECK: %[[B:.*]] = dtc.matmul %arg1, %arg2 transpose_lhs
// CHECK: dtc.reduce_sum %[[B]] dims = [0]
func.func @kept(%h: tensor<2x3x4x5xf32>, %x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4x3x5xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>) {
  %t = dtc.transpose %h permutation = [0, 2, 1, 3] : tensor<2x3x4x5xf32> -> tensor<2x4x3x5xf32>
  %p = dtc.matmul %x, %x transpose_lhs : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x4x4xf32>
  %pt = dtc.transpose %p permutation = [0, 2, 1] : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %q = dtc.matmul %x, %x transpose_lhs : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x4x4xf32>
  %qs = dtc.reduce_sum %q dims = [1] : tensor<2x4x4xf32> -> tensor<2x4xf32>
  %b = dtc.matmul %x, %w transpose_lhs : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x4x4xf32>
  %bs = dtc.reduce_sum %b dims = [0] : tensor<2x4x4xf32> -> tensor<4x4xf32>
  return %t, %p, %pt, %qs, %bs : tensor<2x4x3x5xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>
}

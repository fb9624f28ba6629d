// RUN: dtc-opt %s --dtc-accumulate-scatters -split-input-file | FileCheck %s

// A tied embedding's gradient: the head's gradient plus the lookup's
// gradient scattered into zeros becomes one scatter-add into the head's
// gradient (either operand order); the zeros go.
// CHECK-LABEL: func.func @tied_embedding
// CHECK-NOT: dtc.constant
// CHECK: %[[A:.*]] = dtc.scatter_add %arg2 into %arg0[%arg1] dim = 0
// CHECK: %[[B:.*]] = dtc.scatter_add %arg2 into %arg0[%arg1] dim = 0
// CHECK-NOT: dtc.add
// CHECK: return %[[A]], %[[B]]
func.func @tied_embedding(%head: tensor<16x4xf32>, %ids: tensor<2x3xi64>, %d: tensor<2x3x4xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>) {
  %zeros = dtc.constant dense<0.0> : tensor<16x4xf32>
  %s = dtc.scatter_add %d into %zeros[%ids] dim = 0 : (tensor<16x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<16x4xf32>
  %g = dtc.add %head, %s : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %s2 = dtc.scatter_add %d into %zeros[%ids] dim = 0 : (tensor<16x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<16x4xf32>
  %g2 = dtc.add %s2, %head : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %g, %g2 : tensor<16x4xf32>, tensor<16x4xf32>
}

// -----

// Left alone: a scatter read elsewhere too, a scatter into a value that is
// not zeros, and an addend broadcast to the sum's shape.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: dtc.add
// CHECK: return
func.func @left_alone(%head: tensor<16x4xf32>, %ids: tensor<2x3xi64>, %d: tensor<2x3x4xf32>, %row: tensor<4xf32>) -> (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>) {
  %zeros = dtc.constant dense<0.0> : tensor<16x4xf32>
  %s = dtc.scatter_add %d into %zeros[%ids] dim = 0 : (tensor<16x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<16x4xf32>
  %g = dtc.add %head, %s : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %ones = dtc.constant dense<1.0> : tensor<16x4xf32>
  %t = dtc.scatter_add %d into %ones[%ids] dim = 0 : (tensor<16x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<16x4xf32>
  %h = dtc.add %head, %t : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %u = dtc.scatter_add %d into %zeros[%ids] dim = 0 : (tensor<16x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>) -> tensor<16x4xf32>
  %k = dtc.add %row, %u : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %g, %s, %h, %k : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>
}

// dtc-fuse's row-reductions option: `prologues` (what the CPU target
// computes) lets a float reduction lead a group of the elementwise ops
// feeding it, and nothing more; `none` groups no reduction; another value
// is refused.
// RUN: dtc-opt %s --dtc-fuse=row-reductions=prologues -split-input-file | FileCheck %s
// RUN: dtc-opt %s --dtc-fuse=row-reductions=none -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: not dtc-opt %s --dtc-fuse=row-reductions=some -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dtc-fuse: unknown row-reductions 'some' (all, prologues, none)

// The cross-entropy's pick of each label's log-probability: the one-hot
// mask and the select join the sum (no [tokens, vocab] select is stored);
// the log-softmax stays alone and the scaling after the sum is no part of
// the group.
// CHECK-LABEL: func.func @label_log_probability
// CHECK: %[[LP:.*]] = dtc.log_softmax
// CHECK: %[[S:.*]] = dtc.fusion row_reduction(%arg1, %[[LP]])
// CHECK: dtc.iota
// CHECK: dtc.compare eq
// CHECK: dtc.select
// CHECK: %[[R:.*]] = dtc.reduce_sum
// CHECK: dtc.yield %[[R]]
// CHECK: dtc.mul %[[S]]
// NONE-LABEL: func.func @label_log_probability
// NONE-NOT: row_reduction
func.func @label_log_probability(%x: tensor<4x16xf32>, %labels: tensor<4x1xi64>) -> tensor<4xf32> {
  %lp = dtc.log_softmax %x dim = 1 : tensor<4x16xf32>
  %i = dtc.iota dim = 1 : tensor<1x16xi64>
  %ib = dtc.broadcast %i : tensor<1x16xi64> to tensor<4x16xi64>
  %hot = dtc.compare eq, %ib, %labels : (tensor<4x16xi64>, tensor<4x1xi64>) -> tensor<4x16xi1>
  %z = dtc.constant dense<0.0> : tensor<f32>
  %pick = dtc.select %hot, %lp, %z : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %s = dtc.reduce_sum %pick dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  %h = dtc.constant dense<-0.25> : tensor<f32>
  %l = dtc.mul %s, %h : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %l : tensor<4xf32>
}

// -----

// A softmax leads no group; a bf16 sum (whose kernel would round each
// addition) and a sum over the leading dimension join none.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: row_reduction
// CHECK: return
func.func @alone(%s: tensor<4x8xf32>, %h: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4xbf16>, tensor<8xf32>) {
  %c = dtc.constant dense<0.125> : tensor<f32>
  %0 = dtc.mul %s, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = dtc.softmax %0 dim = 1 : tensor<4x8xf32>
  %2 = dtc.mul %h, %h : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %3 = dtc.reduce_sum %2 dims = [1] : tensor<4x8xbf16> -> tensor<4xbf16>
  %4 = dtc.exp %s : tensor<4x8xf32>
  %5 = dtc.reduce_sum %4 dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %1, %3, %5 : tensor<4x8xf32>, tensor<4xbf16>, tensor<8xf32>
}

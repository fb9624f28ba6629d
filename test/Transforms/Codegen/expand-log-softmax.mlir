// dtc-expand-log-softmax writes an f32 log-softmax as x - max -
// log(sum(exp(x - max))); a bf16 one stays. Then dtc-fuse (as the CPU
// target runs it) recomputes the log-probabilities from the logits in each
// group that reads them: the cross-entropy's row kernel (statistics and
// pick of each label) and its backward's softmax minus one-hot, so that no
// [tokens, vocab] value but the logits and their gradient is stored.
// RUN: dtc-opt %s --dtc-expand-log-softmax -split-input-file | FileCheck %s
// RUN: dtc-opt %s --dtc-expand-log-softmax --dtc-fuse=row-reductions=rows -split-input-file | FileCheck %s --check-prefix=FUSED

// CHECK-LABEL: func.func @cross_entropy
// CHECK-NOT: dtc.log_softmax
// CHECK: %[[M:.*]] = dtc.reduce_max %arg0 dims = [1] keep_dims
// CHECK: %[[X:.*]] = dtc.sub %arg0, %[[M]]
// CHECK: %[[E:.*]] = dtc.exp %[[X]]
// CHECK: %[[S:.*]] = dtc.reduce_sum %[[E]] dims = [1] keep_dims
// CHECK: %[[L:.*]] = dtc.log %[[S]]
// CHECK: dtc.sub %[[X]], %[[L]]

// The logits (%arg0) are read by two kernels: the forward's row kernel (the
// maximum, the sum of exponentials, its log and the pick of each label,
// each row passed over in cache) and the backward's gradient; every value
// of their size but the gradient is computed inside a group, never stored.
// FUSED-LABEL: func.func @cross_entropy
// FUSED: %[[F:.*]]:4 = dtc.fusion row_reduction(%arg0, %arg1)
// FUSED: %[[M:.*]] = dtc.reduce_max
// FUSED: %[[S:.*]] = dtc.reduce_sum
// FUSED: %[[L:.*]] = dtc.log %[[S]]
// FUSED: %[[P:.*]] = dtc.reduce_sum
// FUSED: dtc.yield %[[M]], %[[S]], %[[L]], %[[P]]
// FUSED: dtc.fusion loop(%arg0, %[[F]]#0, %[[F]]#2, %arg1, %arg2){{.*}} -> tensor<4x16xf32>
// FUSED-NOT: dtc.fusion
func.func @cross_entropy(%x: tensor<4x16xf32>, %labels: tensor<4x1xi64>, %g: tensor<4x1xf32>) -> (tensor<4xf32>, tensor<4x16xf32>) {
  %lp = dtc.log_softmax %x dim = 1 : tensor<4x16xf32>
  %i = dtc.iota dim = 1 : tensor<1x16xi64>
  %ib = dtc.broadcast %i : tensor<1x16xi64> to tensor<4x16xi64>
  %hot = dtc.compare eq, %ib, %labels : (tensor<4x16xi64>, tensor<4x1xi64>) -> tensor<4x16xi1>
  %z = dtc.constant dense<0.0> : tensor<f32>
  %pick = dtc.select %hot, %lp, %z : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %s = dtc.reduce_sum %pick dims = [1] : tensor<4x16xf32> -> tensor<4xf32>
  // The backward: (softmax - one-hot) * g.
  %p = dtc.exp %lp : tensor<4x16xf32>
  %one = dtc.constant dense<1.0> : tensor<f32>
  %oh = dtc.select %hot, %one, %z : (tensor<4x16xi1>, tensor<f32>, tensor<f32>) -> tensor<4x16xf32>
  %d = dtc.sub %p, %oh : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %dl = dtc.mul %d, %g : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %s, %dl : tensor<4xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_stays
// CHECK: dtc.log_softmax
func.func @bf16_stays(%x: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
  %lp = dtc.log_softmax %x dim = 1 : tensor<4x16xbf16>
  return %lp : tensor<4x16xbf16>
}

// dtc-expand-row-ops writes f32 softmaxes and norms as reductions and
// elementwise ops; bf16 ones stay. Then dtc-fuse (as the CPU target runs
// it) makes each one row kernel with its neighbours, and recomputes the
// log-probabilities from the logits in each group that reads them: the
// cross-entropy's row kernel (statistics and pick of each label) and its
// backward's softmax minus one-hot, so that no [tokens, vocab] value but
// the logits and their gradient is stored.
// RUN: dtc-opt %s --dtc-expand-row-ops -split-input-file | FileCheck %s
// RUN: dtc-opt %s --dtc-expand-row-ops --dtc-fuse=row-reductions=rows -split-input-file | FileCheck %s --check-prefix=FUSED

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

// -----

// A pre-norm block's residual add, bias add and layer norm: one row kernel
// writing the residual stream, the norm's output and the statistics the
// backward reads (mean and 1 / stddev), nothing else.
// CHECK-LABEL: func.func @residual_layer_norm
// CHECK-NOT: dtc.layer_norm
// CHECK: %[[M:.*]] = dtc.reduce_mean %[[R:.*]] dims = [2] keep_dims
// CHECK: %[[D:.*]] = dtc.sub %[[R]], %[[M]]
// CHECK: %[[SQ:.*]] = dtc.mul %[[D]], %[[D]]
// CHECK: %[[V:.*]] = dtc.reduce_mean %[[SQ]] dims = [2] keep_dims
// CHECK: %[[EPS:.*]] = dtc.constant dense<9.99999974E-6> : tensor<f32>
// CHECK: %[[VE:.*]] = dtc.add %[[V]], %[[EPS]]
// CHECK: %[[INV:.*]] = dtc.rsqrt %[[VE]]
// CHECK: %[[N:.*]] = dtc.mul %[[D]], %[[INV]]
// CHECK: %[[G:.*]] = dtc.mul %[[N]], %arg3
// CHECK: %[[Y:.*]] = dtc.add %[[G]], %arg4
// CHECK: return %[[R]], %[[Y]], %[[M]], %[[INV]]
// FUSED-LABEL: func.func @residual_layer_norm
// FUSED: %[[F:.*]]:5 = dtc.fusion row_reduction(%arg1, %arg2, %arg0, %arg3, %arg4)
// FUSED: %[[HB:.*]] = dtc.add
// FUSED: %[[R:.*]] = dtc.add %{{.*}}, %[[HB]]
// FUSED: %[[M:.*]] = dtc.reduce_mean %[[R]]
// FUSED: %[[V:.*]] = dtc.reduce_mean
// FUSED: %[[INV:.*]] = dtc.rsqrt
// FUSED: %[[Y:.*]] = dtc.add
// FUSED: dtc.yield %[[R]], %[[M]], %[[V]], %[[INV]], %[[Y]]
// FUSED-NOT: dtc.fusion
// FUSED: return %[[F]]#0, %[[F]]#4, %[[F]]#1, %[[F]]#3
func.func @residual_layer_norm(%x: tensor<4x8x16xf32>, %h: tensor<4x8x16xf32>, %b: tensor<16xf32>, %g: tensor<16xf32>, %beta: tensor<16xf32>) -> (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>) {
  %hb = dtc.add %h, %b : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  %r = dtc.add %x, %hb : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %y, %m, %s = dtc.layer_norm %r, %g, %beta dim = 2 epsilon = 1.0e-05 : (tensor<4x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x8x16xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>)
  return %r, %y, %m, %s : tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x1xf32>, tensor<4x8x1xf32>
}

// -----

// An RMS norm after a residual add: one row kernel.
// CHECK-LABEL: func.func @residual_rms_norm
// CHECK: %[[MS:.*]] = dtc.reduce_mean %{{.*}} dims = [2] keep_dims
// CHECK: %[[EPS:.*]] = dtc.constant dense<9.99999997E-7> : tensor<f32>
// CHECK: %[[INV:.*]] = dtc.rsqrt
// CHECK: %[[N:.*]] = dtc.mul %0, %[[INV]]
// CHECK: dtc.mul %[[N]], %arg2
// FUSED-LABEL: func.func @residual_rms_norm
// FUSED: %[[F:.*]]:3 = dtc.fusion row_reduction(%arg0, %arg1, %arg2)
// FUSED-NOT: dtc.fusion
// FUSED: return %[[F]]#0, %[[F]]#2
func.func @residual_rms_norm(%x: tensor<4x8x16xf32>, %h: tensor<4x8x16xf32>, %g: tensor<16xf32>) -> (tensor<4x8x16xf32>, tensor<4x8x16xf32>) {
  %r = dtc.add %x, %h : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %y = dtc.rms_norm %r, %g dim = 2 epsilon = 1.0e-06 : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  return %r, %y : tensor<4x8x16xf32>, tensor<4x8x16xf32>
}

// -----

// A scaled softmax: the scaling joins the softmax's row kernel. One along
// another dimension than the last stays an op.
// CHECK-LABEL: func.func @scaled_softmax
// CHECK: %[[S:.*]] = dtc.mul %arg0
// CHECK: %[[M:.*]] = dtc.reduce_max %[[S]] dims = [1] keep_dims
// CHECK: %[[X:.*]] = dtc.sub %[[S]], %[[M]]
// CHECK: %[[E:.*]] = dtc.exp %[[X]]
// CHECK: %[[SUM:.*]] = dtc.reduce_sum %[[E]] dims = [1] keep_dims
// CHECK: %[[P:.*]] = dtc.div %[[E]], %[[SUM]]
// CHECK: dtc.softmax %[[P]] dim = 0
// FUSED-LABEL: func.func @scaled_softmax
// FUSED: %[[F:.*]]:3 = dtc.fusion row_reduction(%arg0)
// FUSED: dtc.yield
// FUSED-NEXT: }
// FUSED-NEXT: dtc.softmax %[[F]]#2 dim = 0
func.func @scaled_softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = dtc.constant dense<0.125> : tensor<f32>
  %s = dtc.mul %x, %c : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %y = dtc.softmax %s dim = 1 : tensor<4x16xf32>
  %z = dtc.softmax %y dim = 0 : tensor<4x16xf32>
  return %z : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_norms_stay
// CHECK: dtc.layer_norm
// CHECK: dtc.rms_norm
// CHECK: dtc.softmax
func.func @bf16_norms_stay(%x: tensor<4x16xbf16>, %g: tensor<16xbf16>) -> (tensor<4x16xbf16>, tensor<4x1xbf16>, tensor<4x1xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>) {
  %y, %m, %s = dtc.layer_norm %x, %g dim = 1 epsilon = 1.0e-05 : (tensor<4x16xbf16>, tensor<16xbf16>) -> (tensor<4x16xbf16>, tensor<4x1xbf16>, tensor<4x1xbf16>)
  %r = dtc.rms_norm %x, %g dim = 1 epsilon = 1.0e-05 : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  %p = dtc.softmax %x dim = 1 : tensor<4x16xbf16>
  return %y, %m, %s, %r, %p : tensor<4x16xbf16>, tensor<4x1xbf16>, tensor<4x1xbf16>, tensor<4x16xbf16>, tensor<4x16xbf16>
}

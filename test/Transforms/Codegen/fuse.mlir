// RUN: dtc-opt %s --dtc-fuse -split-input-file | FileCheck %s

// An elementwise chain after a matmul: one loop group, its splat constant
// copied in; the matmul (a library call) stays outside.
// CHECK-LABEL: func.func @bias_gelu
// CHECK-NOT: dtc.constant
// CHECK: %[[MM:.*]] = dtc.matmul
// CHECK: %[[Y:.*]] = dtc.fusion loop(%[[MM]], %arg2) : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32> {
// CHECK: ^bb0(%[[A:.*]]: tensor<8x32xf32>, %[[B:.*]]: tensor<32xf32>):
// CHECK-NEXT: %[[S:.*]] = dtc.add %[[A]], %[[B]]
// CHECK-NEXT: %[[G:.*]] = dtc.gelu %[[S]]
// CHECK-NEXT: %[[H:.*]] = dtc.constant dense<5.000000e-01>
// CHECK-NEXT: %[[M:.*]] = dtc.mul %[[G]], %[[H]]
// CHECK-NEXT: dtc.yield %[[M]] : tensor<8x32xf32>
// CHECK: return %[[Y]]
func.func @bias_gelu(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %0 = dtc.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = dtc.add %0, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = dtc.gelu %1 approximate = none : tensor<8x32xf32>
  %h = dtc.constant dense<0.5> : tensor<f32>
  %3 = dtc.mul %2, %h : (tensor<8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
  return %3 : tensor<8x32xf32>
}

// -----

// A softmax with the scaling before it and the masking after it: one
// row-reduction group around its hero.
// CHECK-LABEL: func.func @scaled_softmax
// CHECK: dtc.fusion row_reduction(%arg0, %arg1)
// CHECK: dtc.mul
// CHECK: dtc.softmax
// CHECK: dtc.select
// CHECK: dtc.yield
// CHECK-NOT: dtc.fusion
func.func @scaled_softmax(%s: tensor<4x8xf32>, %keep: tensor<4x8xi1>) -> tensor<4x8xf32> {
  %c = dtc.constant dense<0.125> : tensor<f32>
  %0 = dtc.mul %s, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = dtc.softmax %0 dim = 1 : tensor<4x8xf32>
  %z = dtc.constant dense<0.0> : tensor<f32>
  %2 = dtc.select %keep, %1, %z : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A value read outside the group is not absorbed (it would be computed
// twice): the exp leads its own group, whose result two groups read; a
// value read twice inside one group is absorbed.
// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[E:.*]] = dtc.fusion loop(%arg0)
// CHECK: dtc.neg
// CHECK: dtc.exp
// CHECK: %[[R:.*]] = dtc.fusion loop(%[[E]])
// CHECK: dtc.log
// CHECK: dtc.sqrt
// CHECK: dtc.add
// CHECK: dtc.tanh
// CHECK: return %[[R]], %[[E]]
func.func @shared_producer(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %n = dtc.neg %x : tensor<16xf32>
  %e = dtc.exp %n : tensor<16xf32>
  %l = dtc.log %e : tensor<16xf32>
  %q = dtc.sqrt %l : tensor<16xf32>
  %s = dtc.add %e, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %t = dtc.tanh %s : tensor<16xf32>
  return %t, %e : tensor<16xf32>, tensor<16xf32>
}

// -----

// Two reductions do not share a group (one hero each); a reduction over
// leading dimensions leads none (it is no row reduction), and a lone op
// stays as it is.
// CHECK-LABEL: func.func @two_reductions
// CHECK: %[[N:.*]]:3 = dtc.fusion row_reduction(%arg0, %arg1, %arg2)
// CHECK: dtc.add
// CHECK: dtc.layer_norm
// CHECK: dtc.yield
// CHECK: %[[P:.*]] = dtc.fusion row_reduction(%[[N]]#0)
// CHECK: dtc.exp
// CHECK: dtc.reduce_sum {{.*}} dims = [1]
// CHECK: %[[T:.*]] = dtc.reduce_sum %[[P]] dims = [0]
// CHECK: %[[C:.*]] = dtc.reduce_sum %[[N]]#0 dims = [0]
// CHECK: %[[D:.*]] = dtc.neg %[[C]]
// CHECK: return %[[T]], %[[D]]
func.func @two_reductions(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<f32>, tensor<8xf32>) {
  %0 = dtc.add %x, %r : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1:3 = dtc.layer_norm %0, %g dim = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %2 = dtc.exp %1#0 : tensor<4x8xf32>
  %3 = dtc.reduce_sum %2 dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %4 = dtc.reduce_sum %3 dims = [0] : tensor<4xf32> -> tensor<f32>
  %5 = dtc.reduce_sum %1#0 dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %6 = dtc.neg %5 : tensor<8xf32>
  return %4, %6 : tensor<f32>, tensor<8xf32>
}

// -----

// A training step's optimizer: the updates of both parameters become one
// multi-tensor group, a result per updated value, after the last gradient.
// CHECK-LABEL: func.func @sgd_step
// CHECK: %[[GW:.*]] = dtc.matmul %arg0, %{{.*}} transpose_lhs
// CHECK: %[[GB:.*]] = dtc.slice
// CHECK: %[[U:.*]]:2 = dtc.fusion multi_tensor(%[[GW]], %arg1, %[[GB]], %arg2)
// CHECK-COUNT-2: dtc.sub
// CHECK: dtc.yield %{{.*}}, %{{.*}} : tensor<8x2xf32>, tensor<4x2xf32>
// CHECK: return %{{.*}}, %[[GW]], %[[GB]], %[[U]]#0, %[[U]]#1
func.func @sgd_step(%x: tensor<4x8xf32> {dtc.input = "x"},
                    %w: tensor<8x2xf32> {dtc.param = "w", dtc.aliasing_output = 3 : i64},
                    %b: tensor<4x2xf32> {dtc.param = "b", dtc.aliasing_output = 4 : i64})
    -> (tensor<f32>, tensor<8x2xf32> {dtc.grad = "w"}, tensor<4x2xf32> {dtc.grad = "b"},
        tensor<8x2xf32>, tensor<4x2xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %z = dtc.add %y, %b : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = dtc.reduce_sum %z dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  %ones = dtc.constant dense<1.0> : tensor<4x2xf32>
  %gw = dtc.matmul %x, %ones transpose_lhs : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %sw = dtc.mul %gw, %lr : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
  %nw = dtc.sub %w, %sw : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  %gb = dtc.matmul %ones, %ones transpose_rhs : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  %gb2 = dtc.slice %gb starts = [0, 0] sizes = [4, 2] strides = [1, 1] : tensor<4x4xf32> -> tensor<4x2xf32>
  %sb = dtc.mul %gb2, %lr : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  %nb = dtc.sub %b, %sb : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %loss, %gw, %gb2, %nw, %nb : tensor<f32>, tensor<8x2xf32>, tensor<4x2xf32>, tensor<8x2xf32>, tensor<4x2xf32>
}

// -----

// An update read before the last of them (here by a reduction over it)
// keeps the updates apart: one group at the last would come after that
// reader.
// CHECK-LABEL: func.func @update_read_early
// CHECK-NOT: multi_tensor
// CHECK: dtc.fusion loop
// CHECK: dtc.reduce_sum
// CHECK: dtc.fusion loop
func.func @update_read_early(%x: tensor<4x8xf32> {dtc.input = "x"},
                             %w: tensor<8x2xf32> {dtc.param = "w"},
                             %v: tensor<8x2xf32> {dtc.param = "v"})
    -> (tensor<f32>, tensor<8x2xf32> {dtc.grad = "w"}, tensor<8x2xf32>, tensor<f32>, tensor<8x2xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = dtc.reduce_sum %y dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  %ones = dtc.constant dense<1.0> : tensor<4x2xf32>
  %gw = dtc.matmul %x, %ones transpose_lhs : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %sw = dtc.mul %gw, %lr : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
  %nw = dtc.sub %w, %sw : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  %norm = dtc.reduce_sum %nw dims = [0, 1] : tensor<8x2xf32> -> tensor<f32>
  %sv = dtc.mul %v, %lr : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
  %nv = dtc.sub %v, %sv : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %loss, %gw, %nw, %norm, %nv : tensor<f32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<f32>, tensor<8x2xf32>
}

// -----

// A one-hot mask read by two groups is recomputed in each (from the labels
// and an index grid) rather than stored: no [tokens, vocab] temporary.
// CHECK-LABEL: func.func @one_hot_recomputed
// CHECK-NOT: dtc.compare
// CHECK: dtc.fusion row_reduction
// CHECK: dtc.iota
// CHECK: dtc.compare eq
// CHECK: dtc.reduce_sum
// CHECK: dtc.fusion loop
// CHECK: dtc.iota
// CHECK: dtc.compare eq
// CHECK: dtc.exp
// CHECK-NOT: dtc.iota
// CHECK: return
func.func @one_hot_recomputed(%labels: tensor<4xi64>, %logp: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %iota = dtc.iota dim = 1 : tensor<4x8xi64>
  %l = dtc.reshape %labels : tensor<4xi64> to tensor<4x1xi64>
  %b = dtc.broadcast %l : tensor<4x1xi64> to tensor<4x8xi64>
  %hot = dtc.compare eq, %iota, %b : (tensor<4x8xi64>, tensor<4x8xi64>) -> tensor<4x8xi1>
  %z = dtc.constant dense<0.0> : tensor<f32>
  %sel = dtc.select %hot, %logp, %z : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %s = dtc.reduce_sum %sel dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %e = dtc.exp %logp : tensor<4x8xf32>
  %g = dtc.select %hot, %e, %z : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %s, %g : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// GELU's erf(x / sqrt(2)) with a bias before it, the division read again by
// the backward: a division by a scalar is cheap, so the erf (a lone op) is
// a group recomputing the bias add and the division from the matmul's
// result, and so is the backward's reader; neither is stored.
// CHECK-LABEL: func.func @erf_of_scaled
// CHECK-NOT: dtc.div
// CHECK: %[[E:.*]] = dtc.fusion loop(%arg1, %arg0, %arg2)
// CHECK: dtc.add
// CHECK: dtc.div
// CHECK: dtc.erf
// CHECK: dtc.yield
// CHECK: dtc.fusion loop
// CHECK: dtc.add
// CHECK: dtc.div
// CHECK: dtc.mul
// CHECK: dtc.yield
// CHECK-NOT: dtc.div
// CHECK: return
func.func @erf_of_scaled(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %r: tensor<f32>, %g: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = dtc.add %b, %x : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = dtc.div %h, %r : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = dtc.erf %s : tensor<4x8xf32>
  %d = dtc.mul %s, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = dtc.neg %d : tensor<4x8xf32>
  return %e, %n : tensor<4x8xf32>, tensor<4x8xf32>
}

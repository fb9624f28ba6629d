// dtc-fuse's row-reductions option: `rows` (what the CPU target's row
// kernels compute) lets float reductions along trailing dimensions share a
// group when they fold rows of one shape, with the elementwise ops feeding
// them and those reading their results row by row; `none` groups no
// reduction; another value is refused.
// RUN: dtc-opt %s --dtc-fuse=row-reductions=rows -split-input-file | FileCheck %s
// RUN: dtc-opt %s --dtc-fuse=row-reductions=none -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: not dtc-opt %s --dtc-fuse=row-reductions=some -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dtc-fuse: unknown row-reductions 'some' (all, rows, none)

// The cross-entropy's pick of each label's log-probability: the one-hot
// mask and the select join the sum (no [tokens, vocab] select is stored),
// and so does the scaling after it; the log-softmax stays alone. The
// sum's result is a group result too (a row kernel keeps it there).
// CHECK-LABEL: func.func @label_log_probability
// CHECK: %[[LP:.*]] = dtc.log_softmax
// CHECK: %[[G:.*]]:2 = dtc.fusion row_reduction(%arg1, %[[LP]])
// CHECK: dtc.iota
// CHECK: dtc.compare eq
// CHECK: dtc.select
// CHECK: %[[R:.*]] = dtc.reduce_sum
// CHECK: %[[L:.*]] = dtc.mul %[[R]]
// CHECK: dtc.yield %[[R]], %[[L]]
// CHECK: return %[[G]]#1
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

// -----

// A softmax written out: its maximum, its sum of exponentials and the
// division share one group (the row is read from memory once).
// CHECK-LABEL: func.func @softmax_written_out
// CHECK: %[[G:.*]]:3 = dtc.fusion row_reduction(%arg0)
// CHECK: %[[M:.*]] = dtc.reduce_max
// CHECK: dtc.sub
// CHECK: dtc.exp
// CHECK: %[[S:.*]] = dtc.reduce_sum
// CHECK: %[[P:.*]] = dtc.div
// CHECK: dtc.yield %[[M]], %[[S]], %[[P]]
// CHECK-NOT: dtc.fusion
// CHECK: return %[[G]]#2
func.func @softmax_written_out(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %m = dtc.reduce_max %x dims = [1] keep_dims : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = dtc.sub %x, %m : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %e = dtc.exp %d : tensor<4x16xf32>
  %s = dtc.reduce_sum %e dims = [1] keep_dims : tensor<4x16xf32> -> tensor<4x1xf32>
  %y = dtc.div %e, %s : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A layer norm's backward: two means over [2, 3] rows of 8 and the input
// gradient reading them share one group; the scale's gradient (a sum over
// the leading dimensions) is no part of it, and the normalized input it
// reads is computed in the group too (cheap: it reads one stored value),
// and again in the product the scale's gradient sums (a lone op with the
// producers it recomputes is a group), so that it is never stored.
// CHECK-LABEL: func.func @layer_norm_backward
// CHECK: %[[G:.*]]:3 = dtc.fusion row_reduction
// CHECK: dtc.sub
// CHECK: dtc.mul
// CHECK-COUNT-2: dtc.reduce_mean
// CHECK: dtc.yield
// CHECK: %[[GW:.*]] = dtc.fusion loop
// CHECK: dtc.sub
// CHECK: dtc.mul
// CHECK: dtc.mul
// CHECK: dtc.yield
// CHECK-NOT: dtc.fusion
// CHECK: dtc.reduce_sum %[[GW]] dims = [0, 1]
// CHECK: return %[[G]]#2
func.func @layer_norm_backward(%g: tensor<2x3x8xf32>, %x: tensor<2x3x8xf32>, %mean: tensor<2x3x1xf32>, %rstd: tensor<2x3x1xf32>, %w: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<8xf32>) {
  %c = dtc.sub %x, %mean : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %h = dtc.mul %c, %rstd : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %gh = dtc.mul %g, %w : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %m1 = dtc.reduce_mean %gh dims = [2] keep_dims : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
  %q = dtc.mul %gh, %h : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %m2 = dtc.reduce_mean %q dims = [2] keep_dims : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
  %t1 = dtc.sub %gh, %m1 : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %t2 = dtc.mul %h, %m2 : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %t3 = dtc.sub %t1, %t2 : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %dx = dtc.mul %rstd, %t3 : (tensor<2x3x1xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %gw = dtc.mul %g, %h : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %dw = dtc.reduce_sum %gw dims = [0, 1] : tensor<2x3x8xf32> -> tensor<8xf32>
  return %dx, %dw : tensor<2x3x8xf32>, tensor<8xf32>
}

// -----

// A sum over rows read along another dimension (numpy broadcasting aligns
// it with the columns) cannot be computed row by row: the sum keeps its own
// group, with what feeds it, and the add stays alone.
// CHECK-LABEL: func.func @another_row
// CHECK: %[[S:.*]] = dtc.fusion row_reduction(%arg0)
// CHECK: dtc.exp
// CHECK: dtc.reduce_sum
// CHECK-NOT: dtc.add
// CHECK: dtc.yield
// CHECK: dtc.add %arg1, %[[S]]
func.func @another_row(%x: tensor<4x4xf32>, %z: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = dtc.exp %x : tensor<4x4xf32>
  %s = dtc.reduce_sum %e dims = [1] : tensor<4x4xf32> -> tensor<4xf32>
  %y = dtc.add %z, %s : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// GELU's forward, its erf read again by the backward: the erf's group
// (recomputing the bias add and the division) joins the product that reads
// it, one kernel writing the erf and the activation; the backward's reader
// comes after it.
// CHECK-LABEL: func.func @gelu_forward
// CHECK: %[[G:.*]]:2 = dtc.fusion loop(%arg1, %arg0, %arg2)
// CHECK: dtc.erf
// CHECK: dtc.mul
// CHECK: dtc.yield
// CHECK-NOT: dtc.fusion
// CHECK: dtc.mul %[[G]]#{{[01]}}, %arg3
func.func @gelu_forward(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %r: tensor<f32>, %g: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %h = dtc.add %b, %x : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = dtc.div %h, %r : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %e = dtc.erf %s : tensor<4x8xf32>
  %one = dtc.constant dense<1.0> : tensor<f32>
  %p = dtc.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %y = dtc.mul %h, %p : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = dtc.mul %e, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An exp read by a transpose before the group reading it: it cannot join
// that group (the group's kernel runs after the transpose).
// CHECK-LABEL: func.func @read_before
// CHECK: %[[E:.*]] = dtc.exp %arg0
// CHECK: dtc.transpose %[[E]]
// CHECK: dtc.fusion loop(%[[E]], %arg1)
// CHECK-NOT: dtc.exp
func.func @read_before(%x: tensor<8x8xf32>, %g: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = dtc.exp %x : tensor<8x8xf32>
  %t = dtc.transpose %e permutation = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %y = dtc.mul %e, %g : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = dtc.neg %y : tensor<8x8xf32>
  return %z, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

// RUN: dtc-opt %s --dtc-zero=stage=1 --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,WHOLE
// RUN: dtc-opt %s --dtc-zero=stage=2 --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,SHARDS
// RUN: dtc-opt %s --dtc-zero=stage=3 --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,SHARDS

// dtc-zero on steps dtc-gradient-accumulation made: the microbatches'
// gradients are added up by adds marked dtc.microbatch_sum, and the
// step's dtc.step records how many microbatches it runs. Stage 1 keeps
// the whole gradient buffer: the microbatches accumulate into it and it is
// reduce-scattered once per step. Stages 2 and 3 keep only the shard:
// each microbatch's gradient is reduce-scattered as soon as it is made
// and the shards are added (K reduce-scatters per step).

// Two microbatches of two rows, fp32.
// CHECK-LABEL: func.func @two_microbatches(
// CHECK: %[[G0:.*]] = dtc.matmul %{{.*}} transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// The first microbatch's gradient is reduce-scattered before the second
// microbatch starts.
// SHARDS-NEXT: %[[S0:.*]] = dtc.reduce_scatter %[[G0]] on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: gradient of w (summed over the batch shards); each rank keeps its part"} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: %[[G1:.*]] = dtc.matmul %{{.*}} transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// SHARDS-NEXT: %[[S1:.*]] = dtc.reduce_scatter %[[G1]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<4x3xf32> -> tensor<2x3xf32>
// The loss's sum is not a gradient: it stays, all-reduced.
// CHECK: %[[L:.*]] = dtc.add %{{.*}}, %{{.*}} {dtc.microbatch_sum} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// Stage 1 adds the whole gradients and reduce-scatters the sum once;
// stages 2 and 3 add the shards, still marked as the microbatches' sum.
// WHOLE-NEXT: %[[G:.*]] = dtc.add %[[G0]], %[[G1]] {dtc.microbatch_sum} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// SHARDS-NEXT: %[[GS:.*]] = dtc.add %[[S0]], %[[S1]] {dtc.microbatch_sum} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[LOSS:.*]] = dtc.all_reduce %[[L]]
// WHOLE-NEXT: %[[GS:.*]] = dtc.reduce_scatter %[[G]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<4x3xf32> -> tensor<2x3xf32>
// No whole gradient is summed any more, over the microbatches or over dp.
// SHARDS-NOT: dtc.add {{.*}} -> tensor<4x3xf32>
// CHECK-NOT: dtc.reduce_scatter
// CHECK: return %[[LOSS]], %[[GS]],
dtc.mesh @mesh ["dp" = 2]
func.func @two_microbatches(%x: tensor<4x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                            %w: tensor<4x3xf32> {dtc.param = "w", dtc.aliasing_output = 2 : i64},
                            %mw: tensor<4x3xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 3 : i64})
    -> (tensor<f32>, tensor<4x3xf32> {dtc.grad = "w"}, tensor<4x3xf32>, tensor<4x3xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2, mesh = @mesh>} {
  %x0 = dtc.slice %x starts = [0, 0] sizes = [2, 3] strides = [1, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  %x1 = dtc.slice %x starts = [2, 0] sizes = [2, 3] strides = [1, 1] : tensor<4x3xf32> -> tensor<2x3xf32>
  // microbatch 0: the sum of squares of x0 w^T, and its gradient
  %y0 = dtc.matmul %x0, %w transpose_rhs : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %sq0 = dtc.mul %y0, %y0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l0 = dtc.reduce_sum %sq0 dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %dy0 = dtc.add %y0, %y0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %g0 = dtc.matmul %dy0, %x0 transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // microbatch 1
  %y1 = dtc.matmul %x1, %w transpose_rhs : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %sq1 = dtc.mul %y1, %y1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l1 = dtc.reduce_sum %sq1 dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %dy1 = dtc.add %y1, %y1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %g1 = dtc.matmul %dy1, %x1 transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // their sums, then over dp
  %l = dtc.add %l0, %l1 {dtc.microbatch_sum} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g = dtc.add %g0, %g1 {dtc.microbatch_sum} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gw = dtc.all_reduce %g on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w (summed over the batch shards)"} : tensor<4x3xf32>
  // SGD with momentum
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %mw1 = dtc.mul %mw, %beta : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %mwnew = dtc.add %mw1, %gw : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = dtc.mul %mwnew, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %wnew = dtc.sub %w, %dw : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %loss, %gw, %wnew, %mwnew : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// bf16 (dtc-master-weights): the microbatches' gradients add up in f32 and
// are cast to bf16 once, so the sum over dp moves bf16. Stages 2 and 3
// give each microbatch's gradient the same cast before its reduce-scatter,
// and add the shards in f32, cast to bf16 once.
// CHECK-LABEL: func.func @bf16(
// CHECK: %[[G0:.*]] = dtc.cast %{{.*}} : tensor<4x3xbf16> to tensor<4x3xf32>
// SHARDS-NEXT: %[[N0:.*]] = dtc.cast %[[G0]] : tensor<4x3xf32> to tensor<4x3xbf16>
// SHARDS-NEXT: %[[R0:.*]] = dtc.reduce_scatter %[[N0]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<4x3xbf16> -> tensor<2x3xbf16>
// SHARDS-NEXT: %[[S0:.*]] = dtc.cast %[[R0]] : tensor<2x3xbf16> to tensor<2x3xf32>
// CHECK: %[[G1:.*]] = dtc.cast %{{.*}} : tensor<4x3xbf16> to tensor<4x3xf32>
// SHARDS-NEXT: %[[N1:.*]] = dtc.cast %[[G1]] : tensor<4x3xf32> to tensor<4x3xbf16>
// SHARDS-NEXT: %[[R1:.*]] = dtc.reduce_scatter %[[N1]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<4x3xbf16> -> tensor<2x3xbf16>
// SHARDS-NEXT: %[[S1:.*]] = dtc.cast %[[R1]] : tensor<2x3xbf16> to tensor<2x3xf32>
// WHOLE: %[[G:.*]] = dtc.add %[[G0]], %[[G1]] {dtc.microbatch_sum} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// WHOLE-NEXT: %[[N:.*]] = dtc.cast %[[G]] : tensor<4x3xf32> to tensor<4x3xbf16>
// WHOLE: %[[GS:.*]] = dtc.reduce_scatter %[[N]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<4x3xbf16> -> tensor<2x3xbf16>
// SHARDS: %[[SUM:.*]] = dtc.add %[[S0]], %[[S1]] {dtc.microbatch_sum} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// SHARDS-NEXT: %[[GS:.*]] = dtc.cast %[[SUM]] : tensor<2x3xf32> to tensor<2x3xbf16>
// CHECK-NOT: dtc.reduce_scatter
// The returned gradient is the rank's bf16 shard.
// CHECK: return %{{.*}}, %[[GS]], %{{.*}} : tensor<f32>, tensor<2x3xbf16>,
dtc.mesh @mesh ["dp" = 2]
func.func @bf16(%x: tensor<4x3xbf16> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                %w: tensor<4x3xbf16> {dtc.param = "w", dtc.aliasing_output = 2 : i64},
                %master: tensor<4x3xf32> {dtc.state = #dtc.state<master of "w">, dtc.aliasing_output = 3 : i64},
                %mw: tensor<4x3xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 4 : i64})
    -> (tensor<f32>, tensor<4x3xbf16> {dtc.grad = "w"}, tensor<4x3xbf16>, tensor<4x3xf32>, tensor<4x3xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2, mesh = @mesh>} {
  %x0 = dtc.slice %x starts = [0, 0] sizes = [2, 3] strides = [1, 1] : tensor<4x3xbf16> -> tensor<2x3xbf16>
  %x1 = dtc.slice %x starts = [2, 0] sizes = [2, 3] strides = [1, 1] : tensor<4x3xbf16> -> tensor<2x3xbf16>
  // microbatch 0: the sum of squares of x0 w^T, and its gradient (bf16,
  // widened to f32 for the accumulation)
  %y0 = dtc.matmul %x0, %w transpose_rhs : (tensor<2x3xbf16>, tensor<4x3xbf16>) -> tensor<2x4xbf16>
  %sq0 = dtc.mul %y0, %y0 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %sq0f = dtc.cast %sq0 : tensor<2x4xbf16> to tensor<2x4xf32>
  %l0 = dtc.reduce_sum %sq0f dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %dy0 = dtc.add %y0, %y0 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %g0h = dtc.matmul %dy0, %x0 transpose_lhs : (tensor<2x4xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
  %g0 = dtc.cast %g0h : tensor<4x3xbf16> to tensor<4x3xf32>
  // microbatch 1
  %y1 = dtc.matmul %x1, %w transpose_rhs : (tensor<2x3xbf16>, tensor<4x3xbf16>) -> tensor<2x4xbf16>
  %sq1 = dtc.mul %y1, %y1 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %sq1f = dtc.cast %sq1 : tensor<2x4xbf16> to tensor<2x4xf32>
  %l1 = dtc.reduce_sum %sq1f dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %dy1 = dtc.add %y1, %y1 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %g1h = dtc.matmul %dy1, %x1 transpose_lhs : (tensor<2x4xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
  %g1 = dtc.cast %g1h : tensor<4x3xbf16> to tensor<4x3xf32>
  // their sums in f32, the gradient cast to bf16 once, then over dp
  %l = dtc.add %l0, %l1 {dtc.microbatch_sum} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g = dtc.add %g0, %g1 {dtc.microbatch_sum} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %gh = dtc.cast %g : tensor<4x3xf32> to tensor<4x3xbf16>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gw = dtc.all_reduce %gh on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w (summed over the batch shards)"} : tensor<4x3xbf16>
  // SGD with momentum on the f32 master copy; the parameter is its bf16 cast
  %gwf = dtc.cast %gw : tensor<4x3xbf16> to tensor<4x3xf32>
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %mw1 = dtc.mul %mw, %beta : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %mwnew = dtc.add %mw1, %gwf : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %dw = dtc.mul %mwnew, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %masternew = dtc.sub %master, %dw : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %wnew = dtc.cast %masternew : tensor<4x3xf32> to tensor<4x3xbf16>
  return %loss, %gw, %wnew, %masternew, %mwnew
      : tensor<f32>, tensor<4x3xbf16>, tensor<4x3xbf16>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Three microbatches (sums nested as dtc-gradient-accumulation makes them,
// one as each microbatch finishes) and a parameter of 5 rows over dp = 2,
// padded to 6 (zero-padding.mlir): stages 2 and 3 give each microbatch's
// gradient its zero row and reduce-scatter it, three reduce-scatters in
// all; stage 1 pads and reduce-scatters the sum once.
// CHECK-LABEL: func.func @three_padded(
// CHECK: %[[G0:.*]] = dtc.reduce_sum %{{.*}} dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
// SHARDS: %[[P0:.*]] = dtc.concat %[[G0]], %{{.*}} dim = 0 {dtc.padding} : (tensor<5xf32>, tensor<1xf32>) -> tensor<6xf32>
// SHARDS-NEXT: %[[S0:.*]] = dtc.reduce_scatter %[[P0]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<6xf32> -> tensor<3xf32>
// CHECK: %[[G1:.*]] = dtc.reduce_sum %{{.*}} dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
// SHARDS: %[[P1:.*]] = dtc.concat %[[G1]], %{{.*}} dim = 0 {dtc.padding} : (tensor<5xf32>, tensor<1xf32>) -> tensor<6xf32>
// SHARDS-NEXT: %[[S1:.*]] = dtc.reduce_scatter %[[P1]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<6xf32> -> tensor<3xf32>
// WHOLE: %[[G01:.*]] = dtc.add %[[G0]], %[[G1]] {dtc.microbatch_sum} : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// SHARDS: %[[S01:.*]] = dtc.add %[[S0]], %[[S1]] {dtc.microbatch_sum} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[G2:.*]] = dtc.reduce_sum %{{.*}} dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
// SHARDS: %[[P2:.*]] = dtc.concat %[[G2]], %{{.*}} dim = 0 {dtc.padding} : (tensor<5xf32>, tensor<1xf32>) -> tensor<6xf32>
// SHARDS-NEXT: %[[S2:.*]] = dtc.reduce_scatter %[[P2]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<6xf32> -> tensor<3xf32>
// WHOLE: %[[G:.*]] = dtc.add %[[G01]], %[[G2]] {dtc.microbatch_sum} : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// WHOLE: %[[P:.*]] = dtc.concat %[[G]], %{{.*}} dim = 0 {dtc.padding} : (tensor<5xf32>, tensor<1xf32>) -> tensor<6xf32>
// WHOLE: %[[GS:.*]] = dtc.reduce_scatter %[[P]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<6xf32> -> tensor<3xf32>
// SHARDS: %[[GS:.*]] = dtc.add %[[S01]], %[[S2]] {dtc.microbatch_sum} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// No whole (unpadded) gradient sum is left at stages 2 and 3.
// SHARDS-NOT: dtc.add {{.*}} -> tensor<5xf32>
// CHECK-NOT: dtc.reduce_scatter
// CHECK: return %{{.*}}, %[[GS]],
dtc.mesh @mesh ["dp" = 2]
// expected-remark @+1 {{ZeRO: padded the optimizer state of 'b' from 5 to 6 rows, a multiple of dp=2}}
func.func @three_padded(%x: tensor<6x5xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                        %b: tensor<5xf32> {dtc.param = "b", dtc.aliasing_output = 2 : i64},
                        %mb: tensor<5xf32> {dtc.state = #dtc.state<momentum_buffer of "b">, dtc.aliasing_output = 3 : i64})
    -> (tensor<f32>, tensor<5xf32> {dtc.grad = "b"}, tensor<5xf32>, tensor<5xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 3, mesh = @mesh>} {
  // microbatch i: the sum of squares of x_i + b, and its gradient
  %x0 = dtc.slice %x starts = [0, 0] sizes = [2, 5] strides = [1, 1] : tensor<6x5xf32> -> tensor<2x5xf32>
  %x1 = dtc.slice %x starts = [2, 0] sizes = [2, 5] strides = [1, 1] : tensor<6x5xf32> -> tensor<2x5xf32>
  %x2 = dtc.slice %x starts = [4, 0] sizes = [2, 5] strides = [1, 1] : tensor<6x5xf32> -> tensor<2x5xf32>
  %y0 = dtc.add %x0, %b : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %sq0 = dtc.mul %y0, %y0 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %l0 = dtc.reduce_sum %sq0 dims = [0, 1] : tensor<2x5xf32> -> tensor<f32>
  %dy0 = dtc.add %y0, %y0 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %g0 = dtc.reduce_sum %dy0 dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
  %y1 = dtc.add %x1, %b : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %sq1 = dtc.mul %y1, %y1 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %l1 = dtc.reduce_sum %sq1 dims = [0, 1] : tensor<2x5xf32> -> tensor<f32>
  %dy1 = dtc.add %y1, %y1 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %g1 = dtc.reduce_sum %dy1 dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
  %l01 = dtc.add %l0, %l1 {dtc.microbatch_sum} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g01 = dtc.add %g0, %g1 {dtc.microbatch_sum} : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %y2 = dtc.add %x2, %b : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %sq2 = dtc.mul %y2, %y2 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %l2 = dtc.reduce_sum %sq2 dims = [0, 1] : tensor<2x5xf32> -> tensor<f32>
  %dy2 = dtc.add %y2, %y2 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %g2 = dtc.reduce_sum %dy2 dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
  %l = dtc.add %l01, %l2 {dtc.microbatch_sum} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g = dtc.add %g01, %g2 {dtc.microbatch_sum} : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gb = dtc.all_reduce %g on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of b (summed over the batch shards)"} : tensor<5xf32>
  // SGD with momentum
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %mb1 = dtc.mul %mb, %beta : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %mbnew = dtc.add %mb1, %gb : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %db = dtc.mul %mbnew, %lr : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %bnew = dtc.sub %b, %db : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %loss, %gb, %bnew, %mbnew : tensor<f32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}

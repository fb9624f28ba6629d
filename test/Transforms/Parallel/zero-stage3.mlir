// RUN: dtc-opt %s --dtc-zero=stage=3 --split-input-file --verify-diagnostics | FileCheck %s
// RUN: dtc-opt %s --dtc-zero=stage=3 --split-input-file | FileCheck %s --check-prefix=GATHERS

// dtc-zero, stage 3: besides the state and the gradient (as at stages 1
// and 2, zero.mlir), each parameter with state is kept as its shard and
// all-gathered where the step reads it whole: just before its first read
// in the forward, and again just before its first read in the backward,
// the forward's views of it made again from the second gather, so neither
// gathered copy lives across the step. The update reads the shard and its
// result is the next shard: nothing is gathered after it. Each gather
// records its phase (dtc.gather_phase) for dtc-bucket-gradients.

// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32>
// The parameters are their shards, recorded as split over dp.
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<3x3xf32> {dtc.aliasing_output = 3 : i64, dtc.param = "w1", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<1x6xf32> {dtc.aliasing_output = 5 : i64, dtc.param = "w2", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}
// A frozen parameter has no state, so nothing of it is split.
// CHECK-SAME: %[[E:[a-z0-9]+]]: tensor<6xf32> {dtc.param = "e", dtc.trainable = false}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<3x3xf32> {dtc.aliasing_output = 4 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>, dtc.state = #dtc.state<momentum_buffer of "w1">}
// Gradients, next parameters and next state: all shards.
// CHECK-SAME: -> (tensor<f32>, tensor<3x3xf32> {dtc.grad = "w1", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}, tensor<1x6xf32> {dtc.grad = "w2", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}, tensor<3x3xf32>, tensor<3x3xf32>, tensor<1x6xf32>, tensor<1x6xf32>)
// CHECK-SAME: dtc.zero_stage = 3 : i64
// Forward: each parameter is gathered right before its first read, in
// the order the forward reads them.
// CHECK-NEXT: %[[W1F:.*]] = dtc.all_gather %[[W1]] on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "forward", reason = "ZeRO-3: w1 whole for the forward"} : tensor<3x3xf32> -> tensor<6x3xf32>
// CHECK-NEXT: %[[H0:.*]] = dtc.matmul %[[X]], %[[W1F]] transpose_rhs
// The frozen parameter is read as it is.
// CHECK-NEXT: %[[H:.*]] = dtc.mul %[[H0]], %[[E]]
// CHECK-NEXT: %[[W2F:.*]] = dtc.all_gather %[[W2]] on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "forward", reason = "ZeRO-3: w2 whole for the forward"} : tensor<1x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[W2TF:.*]] = dtc.transpose %[[W2F]] permutation = [1, 0]
// CHECK-NEXT: %[[Y:.*]] = dtc.matmul %[[H]], %[[W2TF]] :
// Backward: w2's view is read again, so w2 is gathered again right before
// that read and the transpose is made again from the new gather; the
// forward's transpose is not read by the backward.
// CHECK: %[[DY:.*]] = dtc.add %[[Y]], %[[Y]]
// CHECK-NOT: %[[W2TF]] transpose_rhs
// CHECK: %[[W2B:.*]] = dtc.all_gather %[[W2]] on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "backward", reason = "ZeRO-3: w2 whole for the backward"} : tensor<1x6xf32> -> tensor<2x6xf32>
// CHECK-NEXT: %[[W2TB:.*]] = dtc.transpose %[[W2B]] permutation = [1, 0]
// CHECK-NEXT: dtc.matmul %[[DY]], %[[W2TB]] transpose_rhs
// The gradients are reduce-scattered as at stages 1 and 2.
// CHECK: %[[LOSS:.*]] = dtc.all_reduce
// CHECK-NEXT: %[[G1:.*]] = dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<6x3xf32> -> tensor<3x3xf32>
// CHECK-NEXT: %[[G2:.*]] = dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<2x6xf32> -> tensor<1x6xf32>
// The update reads the shard, weight decay included: nothing cuts a whole
// parameter, and the new shards are returned as they are.
// CHECK-NOT: dtc.shard
// CHECK: dtc.mul %[[W1]], %{{.*}} : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
// CHECK-NOT: dtc.shard
// CHECK: %[[W1NEW:.*]] = dtc.sub %[[W1]], %{{.*}} : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK-NOT: dtc.shard
// CHECK: %[[W2NEW:.*]] = dtc.sub %[[W2]], %{{.*}} : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
// CHECK-NEXT: return %[[LOSS]], %[[G1]], %[[G2]], %[[W1NEW]], %{{.*}}, %[[W2NEW]], %{{.*}} :
// Three gathers in all: w1 and w2 for the forward, w2 for the backward.
// The backward does not read w1 (its gradient reads x), so w1 is not
// gathered again; nothing gathers the frozen e or the new parameters.
// GATHERS-LABEL: func.func @two_layers(
// GATHERS-COUNT-3: dtc.all_gather
// GATHERS-NOT: dtc.all_gather
// GATHERS: return
dtc.mesh @mesh ["dp" = 2]
func.func @two_layers(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                      %w1: tensor<6x3xf32> {dtc.param = "w1", dtc.aliasing_output = 3 : i64},
                      %w2: tensor<2x6xf32> {dtc.param = "w2", dtc.aliasing_output = 5 : i64},
                      %e: tensor<6xf32> {dtc.param = "e", dtc.trainable = false},
                      %m1: tensor<6x3xf32> {dtc.state = #dtc.state<momentum_buffer of "w1">, dtc.aliasing_output = 4 : i64},
                      %m2: tensor<2x6xf32> {dtc.state = #dtc.state<momentum_buffer of "w2">, dtc.aliasing_output = 6 : i64})
    -> (tensor<f32>, tensor<6x3xf32> {dtc.grad = "w1"}, tensor<2x6xf32> {dtc.grad = "w2"},
        tensor<6x3xf32>, tensor<6x3xf32>, tensor<2x6xf32>, tensor<2x6xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  // forward: the sum of squares of ((x w1^T) * e) w2^T, with w2^T made
  // once as a view
  %h0 = dtc.matmul %x, %w1 transpose_rhs : (tensor<2x3xf32>, tensor<6x3xf32>) -> tensor<2x6xf32>
  %h = dtc.mul %h0, %e : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  %w2t = dtc.transpose %w2 permutation = [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
  %y = dtc.matmul %h, %w2t : (tensor<2x6xf32>, tensor<6x2xf32>) -> tensor<2x2xf32>
  %sq = dtc.mul %y, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  // backward: w2's gradient reads h, h's gradient reads the view w2^T,
  // w1's gradient reads x: the backward never reads w1
  %dy = dtc.add %y, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %gw2t = dtc.matmul %h, %dy transpose_lhs : (tensor<2x6xf32>, tensor<2x2xf32>) -> tensor<6x2xf32>
  %gw2l = dtc.transpose %gw2t permutation = [1, 0] : tensor<6x2xf32> -> tensor<2x6xf32>
  %dh = dtc.matmul %dy, %w2t transpose_rhs : (tensor<2x2xf32>, tensor<6x2xf32>) -> tensor<2x6xf32>
  %dh0 = dtc.mul %dh, %e : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  %gw1l = dtc.matmul %dh0, %x transpose_lhs : (tensor<2x6xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gw1 = dtc.all_reduce %gw1l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w1 (summed over the batch shards)"} : tensor<6x3xf32>
  %gw2 = dtc.all_reduce %gw2l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w2 (summed over the batch shards)"} : tensor<2x6xf32>
  // SGD with momentum; w1 with weight decay
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %wd = dtc.constant dense<0.01> : tensor<f32>
  %d1 = dtc.mul %w1, %wd : (tensor<6x3xf32>, tensor<f32>) -> tensor<6x3xf32>
  %g1 = dtc.add %gw1, %d1 : (tensor<6x3xf32>, tensor<6x3xf32>) -> tensor<6x3xf32>
  %m1b = dtc.mul %m1, %beta : (tensor<6x3xf32>, tensor<f32>) -> tensor<6x3xf32>
  %m1new = dtc.add %m1b, %g1 : (tensor<6x3xf32>, tensor<6x3xf32>) -> tensor<6x3xf32>
  %s1 = dtc.mul %m1new, %lr : (tensor<6x3xf32>, tensor<f32>) -> tensor<6x3xf32>
  %w1new = dtc.sub %w1, %s1 : (tensor<6x3xf32>, tensor<6x3xf32>) -> tensor<6x3xf32>
  %m2b = dtc.mul %m2, %beta : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %m2new = dtc.add %m2b, %gw2 : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %s2 = dtc.mul %m2new, %lr : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  %w2new = dtc.sub %w2, %s2 : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  return %loss, %gw1, %gw2, %w1new, %m1new, %w2new, %m2new
      : tensor<f32>, tensor<6x3xf32>, tensor<2x6xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<2x6xf32>, tensor<2x6xf32>
}

// -----

// A parameter the backward reads itself, not through a view (the input
// gradient of the second projection reads its weight): gathered again
// just before that read.
// CHECK-LABEL: func.func @direct_read(
// CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<1x4xf32> {dtc.aliasing_output = 5 : i64, dtc.param = "c", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}
// CHECK: %[[CF:.*]] = dtc.all_gather %[[C]] on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "forward", reason = "ZeRO-3: c whole for the forward"} : tensor<1x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[Y:.*]] = dtc.matmul %{{.*}}, %[[CF]] transpose_rhs
// CHECK: %[[DY:.*]] = dtc.add %[[Y]], %[[Y]]
// CHECK-NOT: %[[CF]] :
// CHECK: %[[CB:.*]] = dtc.all_gather %[[C]] on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "backward", reason = "ZeRO-3: c whole for the backward"} : tensor<1x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: dtc.matmul %[[DY]], %[[CB]] :
// a and c for the forward, c for the backward.
// GATHERS-LABEL: func.func @direct_read(
// GATHERS-COUNT-3: dtc.all_gather
// GATHERS-NOT: dtc.all_gather
// GATHERS: return
dtc.mesh @mesh ["dp" = 2]
func.func @direct_read(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                       %a: tensor<4x3xf32> {dtc.param = "a", dtc.aliasing_output = 3 : i64},
                       %c: tensor<2x4xf32> {dtc.param = "c", dtc.aliasing_output = 5 : i64},
                       %ma: tensor<4x3xf32> {dtc.state = #dtc.state<momentum_buffer of "a">, dtc.aliasing_output = 4 : i64},
                       %mc: tensor<2x4xf32> {dtc.state = #dtc.state<momentum_buffer of "c">, dtc.aliasing_output = 6 : i64})
    -> (tensor<f32>, tensor<4x3xf32> {dtc.grad = "a"}, tensor<2x4xf32> {dtc.grad = "c"},
        tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  // forward: the sum of squares of (x a^T) c^T
  %h = dtc.matmul %x, %a transpose_rhs : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %y = dtc.matmul %h, %c transpose_rhs : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  %sq = dtc.mul %y, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  // backward
  %dy = dtc.add %y, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %gcl = dtc.matmul %dy, %h transpose_lhs : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %dh = dtc.matmul %dy, %c : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %gal = dtc.matmul %dh, %x transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %ga = dtc.all_reduce %gal on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of a (summed over the batch shards)"} : tensor<4x3xf32>
  %gc = dtc.all_reduce %gcl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of c (summed over the batch shards)"} : tensor<2x4xf32>
  // SGD with momentum
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %ma1 = dtc.mul %ma, %beta : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %manew = dtc.add %ma1, %ga : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %da = dtc.mul %manew, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %anew = dtc.sub %a, %da : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %mc1 = dtc.mul %mc, %beta : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %mcnew = dtc.add %mc1, %gc : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %dc = dtc.mul %mcnew, %lr : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %cnew = dtc.sub %c, %dc : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %loss, %ga, %gc, %anew, %manew, %cnew, %mcnew
      : tensor<f32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

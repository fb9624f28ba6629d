// RUN: dtc-opt %s --dtc-zero=stage=1 --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,STAGE1
// RUN: dtc-opt %s --dtc-zero=stage=2 --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,STAGE2

// dtc-zero, stages 1 and 2, on steps as dtc-data-parallel and
// dtc-optimizer leave them: every gradient all-reduced over dp, the
// update elementwise. Without gradient accumulation the two stages make
// the same program (zero-accumulation.mlir shows where they differ);
// stage 3 is in zero-stage3.mlir, padding in zero-padding.mlir, refused
// options and meshes in zero-invalid.mlir and zero-stage-option.mlir.

// AdamW-like update of one parameter (bias correction left out): the
// moments are split over dp along dimension 0, each rank
// updates its rows from its part of the gradient -- the all-reduce becomes
// a reduce-scatter -- and the new parameter is all-gathered.
// CHECK-LABEL: func.func @adamw(
// The parameter stays whole: only its state is split.
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x3xf32> {dtc.aliasing_output = 2 : i64, dtc.param = "w"}
// Each moment is the rank's half, recorded as split over dp.
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<2x3xf32> {dtc.aliasing_output = 3 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>, dtc.state = #dtc.state<exp_avg of "w">}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<2x3xf32> {dtc.aliasing_output = 4 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>, dtc.state = #dtc.state<exp_avg_sq of "w">}
// State of no parameter (the step counter) is not split.
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<i64> {dtc.aliasing_output = 5 : i64, dtc.state = #dtc.state<step>}
// The gradient result is the rank's shard, with its own layout; the next
// parameter is whole, the next moments are shards like the moments.
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {dtc.grad = "w", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}, tensor<4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<i64>)
// The stage is recorded for the report's gradient-buffer accounting.
// STAGE1-SAME: dtc.zero_stage = 1 : i64
// STAGE2-SAME: dtc.zero_stage = 2 : i64
// The loss, a scalar, is still all-reduced; nothing else is.
// CHECK: %[[LOSS:.*]] = dtc.all_reduce %{{.*}} on @mesh axes = ["dp"] kind = sum
// CHECK-NOT: dtc.all_reduce
// The gradient's sum becomes a reduce-scatter that keeps the sum's reason.
// CHECK: %[[G:.*]] = dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: gradient of w (summed over the batch shards); each rank keeps its part"} : tensor<4x3xf32> -> tensor<2x3xf32>
// The moments update on the shard, from the gradient's shard.
// CHECK: %[[M1:.*]] = dtc.mul %[[M]], %{{.*}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[G1:.*]] = dtc.mul %[[G]], %{{.*}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[MNEW:.*]] = dtc.add %[[M1]], %[[G1]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[V1:.*]] = dtc.mul %[[V]], %{{.*}} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[GG:.*]] = dtc.mul %[[G]], %[[G]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[VNEW:.*]] = dtc.add %[[V1]], %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// The update reads the rank's rows of the parameter, cut without
// communication...
// CHECK: %[[WPART:.*]] = dtc.shard %[[W]] on @mesh axes = ["dp"] dim = 0 {reason = "{{[^"]*}} reads this rank{{.}}s part of operand #{{[0-9]+}}"} : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: %[[WNEW:.*]] = dtc.sub %[[WPART]], %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// ...and the new parameter is gathered whole, the reason naming the stage.
// STAGE1: %[[WHOLE:.*]] = dtc.all_gather %[[WNEW]] on @mesh axes = ["dp"] dim = 0 {reason = "ZeRO-1: new w is computed split over 'dp' but kept whole"} : tensor<2x3xf32> -> tensor<4x3xf32>
// STAGE2: %[[WHOLE:.*]] = dtc.all_gather %[[WNEW]] on @mesh axes = ["dp"] dim = 0 {reason = "ZeRO-2: new w is computed split over 'dp' but kept whole"} : tensor<2x3xf32> -> tensor<4x3xf32>
// The gradient returned is the shard the update read.
// CHECK: return %[[LOSS]], %[[G]], %[[WHOLE]], %[[MNEW]], %[[VNEW]], %{{.*}} :
// CHECK-NOT: dtc.all_reduce
dtc.mesh @mesh ["dp" = 2]
func.func @adamw(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                 %w: tensor<4x3xf32> {dtc.param = "w", dtc.aliasing_output = 2 : i64},
                 %m: tensor<4x3xf32> {dtc.state = #dtc.state<exp_avg of "w">, dtc.aliasing_output = 3 : i64},
                 %v: tensor<4x3xf32> {dtc.state = #dtc.state<exp_avg_sq of "w">, dtc.aliasing_output = 4 : i64},
                 %t: tensor<i64> {dtc.state = #dtc.state<step>, dtc.aliasing_output = 5 : i64})
    -> (tensor<f32>, tensor<4x3xf32> {dtc.grad = "w"}, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<i64>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  // forward: the sum of squares of x w^T; backward: 2 (x w^T)^T x
  %y = dtc.matmul %x, %w transpose_rhs : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %sq = dtc.mul %y, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %dy = dtc.add %y, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %gw = dtc.matmul %dy, %x transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %g = dtc.all_reduce %gw on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w (summed over the batch shards)"} : tensor<4x3xf32>
  // the optimizer
  %one = dtc.constant dense<1> : tensor<i64>
  %t1 = dtc.add %t, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %b1 = dtc.constant dense<0.9> : tensor<f32>
  %c1 = dtc.constant dense<0.1> : tensor<f32>
  %b2 = dtc.constant dense<0.99> : tensor<f32>
  %c2 = dtc.constant dense<0.01> : tensor<f32>
  %lr = dtc.constant dense<0.001> : tensor<f32>
  %eps = dtc.constant dense<1.0e-8> : tensor<f32>
  %m1 = dtc.mul %m, %b1 : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %g1 = dtc.mul %g, %c1 : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %mnew = dtc.add %m1, %g1 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %v1 = dtc.mul %v, %b2 : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %gg = dtc.mul %g, %g : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %g2 = dtc.mul %gg, %c2 : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %vnew = dtc.add %v1, %g2 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %root = dtc.sqrt %vnew : tensor<4x3xf32>
  %den = dtc.add %root, %eps : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %ratio = dtc.div %mnew, %den : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %delta = dtc.mul %ratio, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %wnew = dtc.sub %w, %delta : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %loss, %g, %wnew, %mnew, %vnew, %t1 : tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<i64>
}

// -----

// Parameters split over tp already (per-rank types). A weight whose
// dimension 0 tp splits has its state split over dp along dimension 1, the
// first that dp divides and no other axis splits; a bias, whose only
// dimension tp splits, has its state split along it: dp's part of tp's
// part.
// CHECK-LABEL: func.func @tp_split(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<2x4xf32> {dtc.aliasing_output = 3 : i64, dtc.param = "w", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], []]>}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<2xf32> {dtc.aliasing_output = 5 : i64, dtc.param = "b", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"]]>}
// The state keeps the parameter's tp layout and adds dp on its own dimension.
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<2x2xf32> {dtc.aliasing_output = 4 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], ["dp"]]>, dtc.state = #dtc.state<momentum_buffer of "w">}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<1xf32> {dtc.aliasing_output = 6 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp", "dp"]]>, dtc.state = #dtc.state<momentum_buffer of "b">}
// The gradient shards are laid out as the state, tp included.
// CHECK-SAME: -> (tensor<f32>, tensor<2x2xf32> {dtc.grad = "w", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], ["dp"]]>}, tensor<1xf32> {dtc.grad = "b", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp", "dp"]]>}, tensor<2x4xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<1xf32>)
// CHECK: %[[GW:.*]] = dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 1 {{.*}} : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK: %[[GB:.*]] = dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<2xf32> -> tensor<1xf32>
// CHECK-DAG: dtc.shard %[[W]] on @mesh axes = ["dp"] dim = 1 {reason = "{{[^"]*}} reads this rank{{.}}s part of operand #{{[0-9]+}}"} : tensor<2x4xf32> -> tensor<2x2xf32>
// CHECK-DAG: dtc.shard %[[B]] on @mesh axes = ["dp"] dim = 0 {reason = "{{[^"]*}} reads this rank{{.}}s part of operand #{{[0-9]+}}"} : tensor<2xf32> -> tensor<1xf32>
// CHECK-DAG: %[[WNEW:.*]] = dtc.all_gather %{{.*}} on @mesh axes = ["dp"] dim = 1 {{.*}} : tensor<2x2xf32> -> tensor<2x4xf32>
// CHECK-DAG: %[[BNEW:.*]] = dtc.all_gather %{{.*}} on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<1xf32> -> tensor<2xf32>
// CHECK: return %{{.*}}, %[[GW]], %[[GB]], %[[WNEW]], %{{.*}}, %[[BNEW]], %{{.*}} :
// The sums over tp are no business of dtc-zero.
// CHECK-NOT: dtc.reduce_scatter {{.*}} axes = ["tp"]
dtc.mesh @mesh ["dp" = 2, "tp" = 2]
func.func @tp_split(%x: tensor<2x4xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                    %w: tensor<2x4xf32> {dtc.param = "w", dtc.sharding = #dtc.sharding<@mesh, [["tp"], []]>, dtc.aliasing_output = 3 : i64},
                    %b: tensor<2xf32> {dtc.param = "b", dtc.sharding = #dtc.sharding<@mesh, [["tp"]]>, dtc.aliasing_output = 5 : i64},
                    %mw: tensor<2x4xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 4 : i64},
                    %mb: tensor<2xf32> {dtc.state = #dtc.state<momentum_buffer of "b">, dtc.aliasing_output = 6 : i64})
    -> (tensor<f32>, tensor<2x4xf32> {dtc.grad = "w"}, tensor<2xf32> {dtc.grad = "b"},
        tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  // forward: a column-parallel projection and its bias
  %y0 = dtc.matmul %x, %w transpose_rhs : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32>
  %y = dtc.add %y0, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %sq = dtc.mul %y, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  %ltp = dtc.all_reduce %l on @mesh axes = ["tp"] kind = sum {reason = "tensor-parallel: result 0 (partial sums over tp)"} : tensor<f32>
  // backward
  %dy = dtc.add %y, %y : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %gwl = dtc.matmul %dy, %x transpose_lhs : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %gbl = dtc.reduce_sum %dy dims = [0] : tensor<2x2xf32> -> tensor<2xf32>
  %loss = dtc.all_reduce %ltp on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gw = dtc.all_reduce %gwl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w (summed over the batch shards)"} : tensor<2x4xf32>
  %gb = dtc.all_reduce %gbl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of b (summed over the batch shards)"} : tensor<2xf32>
  // SGD with momentum
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %mw1 = dtc.mul %mw, %beta : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %mwnew = dtc.add %mw1, %gw : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %dw = dtc.mul %mwnew, %lr : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %wnew = dtc.sub %w, %dw : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %mb1 = dtc.mul %mb, %beta : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %mbnew = dtc.add %mb1, %gb : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %db = dtc.mul %mbnew, %lr : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %bnew = dtc.sub %b, %db : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %loss, %gw, %gb, %wnew, %mwnew, %bnew, %mbnew
      : tensor<f32>, tensor<2x4xf32>, tensor<2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A parameter whose only dimension tp splits and dp does not divide (6
// rows, 3 per tp rank) is not padded -- the padding would go along a
// dimension another axis splits -- so its state stays whole, with a
// warning, and its gradient stays all-reduced; the other parameter of the
// step is still sharded.
// CHECK-LABEL: func.func @stays_whole(
// CHECK-SAME: %[[C:[a-z0-9]+]]: tensor<3xf32> {dtc.aliasing_output = 3 : i64, dtc.param = "c", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"]]>}
// The state of c is as it was: whole over dp, no layout of its own.
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<3xf32> {dtc.aliasing_output = 4 : i64, dtc.state = #dtc.state<momentum_buffer of "c">}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<2x3xf32> {dtc.aliasing_output = 6 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>, dtc.state = #dtc.state<momentum_buffer of "v">}
// Its gradient result is whole as well.
// CHECK-SAME: -> (tensor<f32>, tensor<3xf32> {dtc.grad = "c"}, tensor<2x3xf32> {dtc.grad = "v", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}
// CHECK: %[[GC:.*]] = dtc.all_reduce %{{.*}} on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of c (summed over the batch shards)"} : tensor<3xf32>
// CHECK: %[[GV:.*]] = dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 0 {reason = "data-parallel: gradient of v (summed over the batch shards); each rank keeps its part"} : tensor<4x3xf32> -> tensor<2x3xf32>
// c is updated whole, from its whole gradient: never cut, never gathered.
// CHECK-NOT: dtc.shard %[[C]]
// CHECK-NOT: dtc.all_gather {{.*}}new c
// CHECK: return %{{.*}}, %[[GC]], %[[GV]],
dtc.mesh @mesh ["dp" = 2, "tp" = 2]
// expected-warning @+1 {{ZeRO: the optimizer state of 'c' stays whole: no dimension of 'tensor<3xf32>' splits over dp=2, and one split by another axis is not padded}}
func.func @stays_whole(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                       %v: tensor<4x3xf32> {dtc.param = "v", dtc.aliasing_output = 5 : i64},
                       %c: tensor<3xf32> {dtc.param = "c", dtc.sharding = #dtc.sharding<@mesh, [["tp"]]>, dtc.aliasing_output = 3 : i64},
                       %mc: tensor<3xf32> {dtc.state = #dtc.state<momentum_buffer of "c">, dtc.aliasing_output = 4 : i64},
                       %mv: tensor<4x3xf32> {dtc.state = #dtc.state<momentum_buffer of "v">, dtc.aliasing_output = 6 : i64})
    -> (tensor<f32>, tensor<3xf32> {dtc.grad = "c"}, tensor<4x3xf32> {dtc.grad = "v"},
        tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  // forward: the sum of squares of (x + c) v^T
  %y = dtc.add %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %z = dtc.matmul %y, %v transpose_rhs : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %sq = dtc.mul %z, %z : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  // backward
  %dz = dtc.add %z, %z : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %gvl = dtc.matmul %dz, %y transpose_lhs : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %dy = dtc.matmul %dz, %v : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %gcl = dtc.reduce_sum %dy dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gc = dtc.all_reduce %gcl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of c (summed over the batch shards)"} : tensor<3xf32>
  %gv = dtc.all_reduce %gvl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of v (summed over the batch shards)"} : tensor<4x3xf32>
  // SGD with momentum
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %mc1 = dtc.mul %mc, %beta : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %mcnew = dtc.add %mc1, %gc : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %dc = dtc.mul %mcnew, %lr : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %cnew = dtc.sub %c, %dc : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %mv1 = dtc.mul %mv, %beta : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %mvnew = dtc.add %mv1, %gv : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %dv = dtc.mul %mvnew, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %vnew = dtc.sub %v, %dv : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %loss, %gc, %gv, %cnew, %mcnew, %vnew, %mvnew
      : tensor<f32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A scalar parameter (a learned temperature) has no dimension to split or
// pad: its state stays whole, with a warning, and its gradient is
// all-reduced as before.
// CHECK-LABEL: func.func @scalar(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<f32> {dtc.aliasing_output = 3 : i64, dtc.state = #dtc.state<momentum_buffer of "s">}
// CHECK-SAME: -> (tensor<f32>, tensor<f32> {dtc.grad = "s"}, tensor<f32>, tensor<f32>)
// CHECK: dtc.all_reduce {{.*}} {reason = "data-parallel: gradient of s (summed over the batch shards)"} : tensor<f32>
// CHECK-NOT: dtc.reduce_scatter
// CHECK-NOT: dtc.all_gather
// CHECK: return
dtc.mesh @mesh ["dp" = 2]
// expected-warning @+1 {{ZeRO: the optimizer state of 's' stays whole: no dimension of 'tensor<f32>' splits over dp=2}}
func.func @scalar(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                  %s: tensor<f32> {dtc.param = "s", dtc.aliasing_output = 2 : i64},
                  %ms: tensor<f32> {dtc.state = #dtc.state<momentum_buffer of "s">, dtc.aliasing_output = 3 : i64})
    -> (tensor<f32>, tensor<f32> {dtc.grad = "s"}, tensor<f32>, tensor<f32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  %y = dtc.mul %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %l = dtc.reduce_sum %y dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %gsl = dtc.reduce_sum %x dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gs = dtc.all_reduce %gsl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of s (summed over the batch shards)"} : tensor<f32>
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %ms1 = dtc.mul %ms, %beta : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %msnew = dtc.add %ms1, %gs : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ds = dtc.mul %msnew, %lr : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %snew = dtc.sub %s, %ds : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %loss, %gs, %snew, %msnew : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

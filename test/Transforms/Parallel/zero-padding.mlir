// RUN: dtc-opt %s --dtc-zero=stage=1 --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,STAGE1
// RUN: dtc-opt %s --dtc-zero=stage=3 --split-input-file --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,STAGE3

// dtc-zero pads a parameter no dimension of which dp divides: its state
// gets zero rows up to a multiple of dp, its gradient gets them before
// the sum over dp (so the sum still becomes a reduce-scatter), and the
// update works on padded values; the padded gradient result (and stage
// 3's padded parameter shard) records its true row count. Each padding
// concat is marked dtc.padding. (Under gradient accumulation:
// zero-accumulation.mlir.)

// A bias of 5 rows over dp = 2: padded to 6, 3 per rank.
// CHECK-LABEL: func.func @padded_bias(
// Stage 1 keeps the parameter whole and unpadded; stage 3 keeps the
// rank's shard of the padded whole, with the true row count.
// STAGE1-SAME: %[[B:[a-z0-9]+]]: tensor<5xf32> {dtc.aliasing_output = 2 : i64, dtc.param = "b"}
// STAGE3-SAME: %[[B:[a-z0-9]+]]: tensor<3xf32> {dtc.aliasing_output = 2 : i64, dtc.param = "b", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"]]>, dtc.unpadded_rows = 5 : i64}
// The state is the rank's 3 of the 6 padded rows, of which 5 are real.
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<3xf32> {dtc.aliasing_output = 3 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"]]>, dtc.state = #dtc.state<momentum_buffer of "b">, dtc.unpadded_rows = 5 : i64}
// So is the gradient result; the next parameter is as the parameter.
// STAGE1-SAME: -> (tensor<f32>, tensor<3xf32> {dtc.grad = "b", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"]]>, dtc.unpadded_rows = 5 : i64}, tensor<5xf32>, tensor<3xf32>)
// STAGE3-SAME: -> (tensor<f32>, tensor<3xf32> {dtc.grad = "b", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"]]>, dtc.unpadded_rows = 5 : i64}, tensor<3xf32>, tensor<3xf32>)
// The forward reads the 5 real rows: stage 1 the parameter itself, stage 3
// the first rows of its gathered padded whole.
// STAGE1: dtc.add %{{.*}}, %[[B]] : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// STAGE3: %[[BPADDED:.*]] = dtc.all_gather %[[B]] on @mesh axes = ["dp"] dim = 0 {dtc.gather_phase = "forward", reason = "ZeRO-3: b whole for the forward"} : tensor<3xf32> -> tensor<6xf32>
// STAGE3-NEXT: %[[BREAL:.*]] = dtc.slice %[[BPADDED]] starts = [0] sizes = [5] strides = [1] : tensor<6xf32> -> tensor<5xf32>
// STAGE3-NEXT: dtc.add %{{.*}}, %[[BREAL]] : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// The rank's gradient gets a zero row before the sum, which so becomes a
// reduce-scatter of the padded 6 rows.
// CHECK: %[[GLOCAL:.*]] = dtc.reduce_sum %{{.*}} dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
// CHECK-NEXT: %[[ZEROS:.*]] = dtc.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK-NEXT: %[[GPAD:.*]] = dtc.concat %[[GLOCAL]], %[[ZEROS]] dim = 0 {dtc.padding} : (tensor<5xf32>, tensor<1xf32>) -> tensor<6xf32>
// CHECK: %[[G:.*]] = dtc.reduce_scatter %[[GPAD]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<6xf32> -> tensor<3xf32>
// Stage 1 pads the parameter where the update first reads it (here its
// weight decay), not for the whole step, and cuts the rank's rows of it.
// STAGE1: %[[BPAD:.*]] = dtc.concat %[[B]], %{{.*}} dim = 0 {dtc.padding} : (tensor<5xf32>, tensor<1xf32>) -> tensor<6xf32>
// STAGE1-NEXT: %[[DECAY:.*]] = dtc.mul %[[BPAD]], %{{.*}} : (tensor<6xf32>, tensor<f32>) -> tensor<6xf32>
// STAGE1: %[[BPART:.*]] = dtc.shard %[[BPAD]] on @mesh axes = ["dp"] dim = 0 {reason = "{{[^"]*}} reads this rank{{.}}s part of operand #{{[0-9]+}}"} : tensor<6xf32> -> tensor<3xf32>
// STAGE1-NEXT: %[[BNEW:.*]] = dtc.sub %[[BPART]], %{{.*}} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// The new parameter is the gathered padded whole's first 5 rows.
// STAGE1-NEXT: %[[BWHOLE:.*]] = dtc.all_gather %[[BNEW]] on @mesh axes = ["dp"] dim = 0 {{.*}} : tensor<3xf32> -> tensor<6xf32>
// STAGE1-NEXT: %[[BOUT:.*]] = dtc.slice %[[BWHOLE]] starts = [0] sizes = [5] strides = [1] : tensor<6xf32> -> tensor<5xf32>
// STAGE1-NEXT: return %{{.*}}, %[[G]], %[[BOUT]], %{{.*}} :
// Stage 3's update reads the shard, decay included: no padding of the
// parameter, no gather, and its shard is the next parameter.
// STAGE3-NOT: dtc.concat %[[B]]
// STAGE3: dtc.mul %[[B]], %{{.*}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// STAGE3-NOT: dtc.all_gather
// STAGE3: %[[BNEW:.*]] = dtc.sub %[[B]], %{{.*}} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// STAGE3-NEXT: return %{{.*}}, %[[G]], %[[BNEW]], %{{.*}} :
dtc.mesh @mesh ["dp" = 2]
// expected-remark @+1 {{ZeRO: padded the optimizer state of 'b' from 5 to 6 rows, a multiple of dp=2}}
func.func @padded_bias(%x: tensor<2x5xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                       %b: tensor<5xf32> {dtc.param = "b", dtc.aliasing_output = 2 : i64},
                       %mb: tensor<5xf32> {dtc.state = #dtc.state<momentum_buffer of "b">, dtc.aliasing_output = 3 : i64})
    -> (tensor<f32>, tensor<5xf32> {dtc.grad = "b"}, tensor<5xf32>, tensor<5xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  // forward: the sum of squares of x + b
  %y = dtc.add %x, %b : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %sq = dtc.mul %y, %y : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x5xf32> -> tensor<f32>
  // backward
  %dy = dtc.add %y, %y : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %gbl = dtc.reduce_sum %dy dims = [0] : tensor<2x5xf32> -> tensor<5xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gb = dtc.all_reduce %gbl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of b (summed over the batch shards)"} : tensor<5xf32>
  // SGD with momentum and weight decay
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %wd = dtc.constant dense<0.01> : tensor<f32>
  %decay = dtc.mul %b, %wd : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %gd = dtc.add %gb, %decay : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %mb1 = dtc.mul %mb, %beta : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %mbnew = dtc.add %mb1, %gd : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %db = dtc.mul %mbnew, %lr : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %bnew = dtc.sub %b, %db : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %loss, %gb, %bnew, %mbnew : tensor<f32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}

// -----

// A weight of 3 x 4 over dp = 2: dimension 0 does not divide, dimension 1
// does, so the state is split along dimension 1 and nothing is padded (no
// remark either).
// CHECK-LABEL: func.func @second_dimension(
// CHECK-SAME: tensor<3x2xf32> {dtc.aliasing_output = 3 : i64, dtc.sharding = #dtc.sharding<@mesh, {{\[}}[], ["dp"]]>, dtc.state = #dtc.state<momentum_buffer of "w">}
// CHECK-SAME: -> (tensor<f32>, tensor<3x2xf32> {dtc.grad = "w", dtc.sharding = #dtc.sharding<@mesh, {{\[}}[], ["dp"]]>},
// CHECK-NOT: dtc.unpadded_rows
// CHECK-NOT: dtc.padding
// CHECK: dtc.reduce_scatter %{{.*}} on @mesh axes = ["dp"] dim = 1 {{.*}} : tensor<3x4xf32> -> tensor<3x2xf32>
// CHECK-NOT: dtc.padding
// CHECK: return
dtc.mesh @mesh ["dp" = 2]
func.func @second_dimension(%x: tensor<2x4xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                            %w: tensor<3x4xf32> {dtc.param = "w", dtc.aliasing_output = 2 : i64},
                            %mw: tensor<3x4xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 3 : i64})
    -> (tensor<f32>, tensor<3x4xf32> {dtc.grad = "w"}, tensor<3x4xf32>, tensor<3x4xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  // forward: the sum of squares of x w^T
  %y = dtc.matmul %x, %w transpose_rhs : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %sq = dtc.mul %y, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  // backward
  %dy = dtc.add %y, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %gwl = dtc.matmul %dy, %x transpose_lhs : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
  %gw = dtc.all_reduce %gwl on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w (summed over the batch shards)"} : tensor<3x4xf32>
  // SGD with momentum
  %beta = dtc.constant dense<0.9> : tensor<f32>
  %lr = dtc.constant dense<0.1> : tensor<f32>
  %mw1 = dtc.mul %mw, %beta : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %mwnew = dtc.add %mw1, %gw : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %dw = dtc.mul %mwnew, %lr : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %wnew = dtc.sub %w, %dw : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %loss, %gw, %wnew, %mwnew : tensor<f32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

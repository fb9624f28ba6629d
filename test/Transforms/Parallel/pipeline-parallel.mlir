// RUN: dtc-opt %s --dtc-autodiff --dtc-pipeline-parallel="size=2 microbatches=2 schedule=gpipe" | FileCheck %s
// RUN: not dtc-opt %s --dtc-autodiff --dtc-pipeline-parallel="size=2 microbatches=3 schedule=interleaved virtual-stages=2" 2>&1 | FileCheck %s --check-prefix=GROUPS
// RUN: not dtc-opt %s --dtc-autodiff --dtc-pipeline-parallel="size=2 microbatches=2 schedule=interleaved virtual-stages=4" 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not dtc-opt %s --dtc-autodiff --dtc-pipeline-parallel="size=4" 2>&1 | FileCheck %s --check-prefix=MESH
// RUN: not dtc-opt %s --dtc-autodiff --dtc-pipeline-parallel="size=1" 2>&1 | FileCheck %s --check-prefix=ONE

// Two stages, two microbatches, GPipe: both microbatches' forwards on stage
// 0, then on stage 1 (reading stage 0's activations, broadcast over pp),
// then the backwards; the gradients and the loss are summed over the
// microbatches on their stages. Both weights are read by stage 0 alone:
// rank 0 holds them (dtc.pp_ranks) and their gradients, which stay there;
// the loss goes to every rank.
// Each op of a fragment says which (dtc.fragment), for dtc-run --trace.
// CHECK: dtc.mesh @mesh ["pp" = 2]
// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32> {dtc.input = "x"}, %[[W1:.*]]: tensor<3x3xf32> {dtc.param = "w1", dtc.pp_ranks = array<i64: 0>}, %[[W2:.*]]: tensor<3x2xf32> {dtc.param = "w2", dtc.pp_ranks = array<i64: 0>})
// CHECK-SAME: dtc.pipeline = {{{.*}}axis = "pp"{{.*}}microbatches = 2 : i64, schedule = "gpipe"{{.*}}stage_ranks = array<i64: 0, 1>
// CHECK-SAME: dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2, mesh = @mesh>
// CHECK-DAG: %[[X0:.*]] = dtc.slice %[[X]] starts = [0, 0] {{.*}} {dtc.microbatch = 0 : i64}
// CHECK-DAG: %[[X1:.*]] = dtc.slice %[[X]] starts = [2, 0] {{.*}} {dtc.microbatch = 1 : i64}
// CHECK: %[[H0:.*]] = dtc.matmul %[[X0]], %[[W1]] {dtc.fragment = "forward", dtc.microbatch = 0 : i64, dtc.stage = 0 : i64}
// CHECK: %[[Y0:.*]] = dtc.matmul %{{.*}}, %[[W2]] {dtc.fragment = "forward", dtc.microbatch = 0 : i64, dtc.stage = 0 : i64}
// CHECK-NEXT: %[[SENT0:.*]] = dtc.collective_broadcast %[[Y0]] on @mesh axes = ["pp"] root = 0
// CHECK: %[[H1:.*]] = dtc.matmul %[[X1]], %[[W1]] {dtc.fragment = "forward", dtc.microbatch = 1 : i64, dtc.stage = 0 : i64}
// CHECK: dtc.collective_broadcast {{.*}} root = 0
// CHECK: dtc.mul %[[SENT0]], %[[SENT0]] {dtc.fragment = "forward", dtc.microbatch = 0 : i64, dtc.stage = 1 : i64}
// CHECK: %[[LOSS:.*]] = dtc.add {{.*}} dtc.microbatch_sum, dtc.stage = 1 : i64}
// CHECK-NEXT: %[[LOSSALL:.*]] = dtc.collective_broadcast %[[LOSS]] on @mesh axes = ["pp"] root = 1
// Microbatch 0's backward on stage 1, its gradient sent down to stage 0:
// CHECK: %[[DY0:.*]] = dtc.add {{.*}} {dtc.fragment = "backward", dtc.microbatch = 0 : i64, dtc.stage = 1 : i64}
// CHECK-NEXT: %[[DYSENT0:.*]] = dtc.collective_broadcast %[[DY0]] on @mesh axes = ["pp"] root = 1
// CHECK: dtc.matmul %[[DYSENT0]], %[[W2]] transpose_rhs {dtc.fragment = "backward", dtc.microbatch = 0 : i64, dtc.stage = 0 : i64}
// CHECK: %[[G1:.*]] = dtc.add {{.*}} dtc.microbatch_sum, dtc.stage = 0 : i64} : (tensor<3x3xf32>, tensor<3x3xf32>)
// CHECK-NOT: collective_broadcast
// CHECK: %[[G2:.*]] = dtc.add {{.*}} dtc.microbatch_sum, dtc.stage = 0 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>)
// CHECK-NOT: collective_broadcast
// CHECK: return %[[LOSSALL]], %[[G1]], %[[G2]]
// GROUPS: error: dtc-pipeline-parallel: the interleaved schedule runs microbatches in groups of the pipeline's ranks: 3 microbatches is not a multiple of pp=2
// DEEP: error: pipeline: the forward has 6 ops that read the batch, too few for 8 stages
// MESH: error: mesh axis 'pp' has size 2, not 4
// ONE: error: dtc-pipeline-parallel needs a pp axis of 2 or more ranks, not 1
dtc.mesh @mesh ["pp" = 2]
func.func @two_layers(%x: tensor<4x3xf32> {dtc.input = "x"}, %w1: tensor<3x3xf32> {dtc.param = "w1"},
                      %w2: tensor<3x2xf32> {dtc.param = "w2"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %h = dtc.matmul %x, %w1 : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %r = dtc.relu %h : tensor<4x3xf32>
  %y = dtc.matmul %r, %w2 : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %sq = dtc.mul %y, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

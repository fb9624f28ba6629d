// RUN: dtc-opt %s --dtc-autodiff --dtc-data-parallel=dp=2 --split-input-file --verify-diagnostics | FileCheck %s
// --strict-sharding refuses the one resharding, naming the op, the operand
// and the bytes.
// RUN: not dtc-opt %s --dtc-autodiff --dtc-data-parallel="dp=2 strict-sharding=1" --split-input-file --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=STRICT

// Each rank sees half the batch; the loss and the weight gradient are sums
// over the batch, so each is all-reduced once, with the reason recorded.
// CHECK: dtc.mesh @mesh ["dp" = 2]
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["dp"], []]>}
// The step records the mesh it runs on.
// CHECK-SAME: attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>}
// CHECK: %[[Y:.*]] = dtc.matmul %[[X]], %{{.*}} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
// CHECK: %[[L:.*]] = dtc.reduce_sum {{.*}} : tensor<2x2xf32> -> tensor<f32>
// CHECK: %[[G:.*]] = dtc.matmul %[[X]], %{{.*}} transpose_lhs : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
// CHECK: %[[LSUM:.*]] = dtc.all_reduce %[[L]] on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"}
// CHECK: %[[GSUM:.*]] = dtc.all_reduce %[[G]] on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w (summed over the batch shards)"}
// CHECK: return %[[LSUM]], %[[GSUM]]
func.func @linear(%x: tensor<4x3xf32> {dtc.input = "x"}, %w: tensor<3x2xf32> {dtc.param = "w"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %sq = dtc.mul %y, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A batch that does not divide over the ranks is refused by input name.
// expected-error @+1 {{input 'x' of type 'tensor<3x2xf32>': its batch (dimension 0) does not divide over 2 data-parallel shards}}
func.func @odd_batch(%x: tensor<3x2xf32> {dtc.input = "x"}, %w: tensor<2xf32> {dtc.param = "w"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.mul %x, %w : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %l = dtc.reduce_sum %y dims = [0, 1] : tensor<3x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A softmax across the batch mixes samples: it cannot run on a shard. Its
// input is all-gathered (a resharding, with a warning), it runs on the
// whole batch on every rank, and the loss it feeds is whole, not summed.
// CHECK-LABEL: func.func @softmax_over_batch(
// CHECK: %[[Y:.*]] = dtc.mul
// CHECK: %[[W:.*]] = dtc.all_gather %[[Y]] on @mesh axes = ["dp"] dim = 0 {dtc.resharding, reason = "data-parallel: 'dtc.softmax': it needs dimension 0 of operand #0 whole"} : tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK: dtc.softmax %[[W]] dim = 0 : tensor<4x2xf32>
// STRICT: error: data-parallel: --strict-sharding: 'dtc.softmax' would need operand #0 ('tensor<2x2xf32>' per rank, split along dimension 0 over 'dp') all-gathered, 16 bus bytes per step: it needs dimension 0 of operand #0 whole
func.func @softmax_over_batch(%x: tensor<4x2xf32> {dtc.input = "x"}, %w: tensor<2xf32> {dtc.param = "w"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.mul %x, %w : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  // expected-warning @+1 {{data-parallel: 'dtc.softmax' runs replicated on gathered operands: it needs dimension 0 of operand #0 whole}}
  %s = dtc.softmax %y dim = 0 : tensor<4x2xf32>
  %l = dtc.reduce_sum %s dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

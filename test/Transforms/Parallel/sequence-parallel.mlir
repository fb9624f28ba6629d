// RUN: dtc-opt %s --dtc-autodiff --dtc-sequence-parallel=tp=2 | FileCheck %s

// Sequence parallelism on an MLP block: the row-parallel output is
// reduce-scattered along the sequence (dimension 1) instead of
// all-reduced, and the residual stream and loss after it work on the
// rank's half of the tokens (the input sliced to match). In the backward,
// the row-parallel projection gathers the tokens of its output gradient,
// and the column-parallel input gradient is reduce-scattered. The norm's
// weight and bias gradients are sums over every rank's tokens, all-reduced.
// CHECK-LABEL: func.func @mlp(
// CHECK: dtc.tanh
// CHECK: %[[Y:.*]] = dtc.matmul {{.*}} -> tensor<2x4x8xf32>
// CHECK-NEXT: dtc.reduce_scatter %[[Y]] on @mesh axes = ["tp"] dim = 1 {reason = "tensor-parallel: 'dtc.add' needs the whole value of a partial sum over 'tp' (sequence-parallel: each rank keeps its part of the sequence)"} : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: dtc.shard %arg0 on @mesh axes = ["tp"] dim = 1 {reason = "{{[^"]*}} reads this rank{{.}}s part of operand #{{[0-9]+}}"} : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: dtc.all_gather {{.*}} on @mesh axes = ["tp"] dim = 1 {reason = "tensor-parallel: 'dtc.matmul' needs its lhs whole (split unlike the rhs)"} : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: dtc.reduce_scatter {{.*}} dim = 1 {reason = "tensor-parallel: 'dtc.matmul' makes a partial sum that several ops read (sequence-parallel: each rank keeps its part of the sequence)"} : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: dtc.all_reduce {{.*}} {reason = "tensor-parallel: result 0 (partial sums over tp)"} : tensor<f32>
// CHECK: dtc.all_reduce {{.*}} {reason = "tensor-parallel: gradient of ln.weight (partial sums over tp)"} : tensor<8xf32>
// CHECK: dtc.all_reduce {{.*}} {reason = "tensor-parallel: gradient of ln.bias (partial sums over tp)"} : tensor<8xf32>
// CHECK-NOT: dtc.all_reduce
// CHECK: return
func.func @mlp(%x: tensor<2x4x8xf32> {dtc.input = "x"},
               %g: tensor<8xf32> {dtc.param = "ln.weight"}, %b: tensor<8xf32> {dtc.param = "ln.bias"},
               %w1: tensor<16x8xf32> {dtc.param = "fc.weight"}, %b1: tensor<16xf32> {dtc.param = "fc.bias"},
               %w2: tensor<8x16xf32> {dtc.param = "out.weight"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %n:3 = dtc.layer_norm %x, %g, %b dim = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  %w1t = dtc.transpose %w1 permutation = [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %h = dtc.matmul %n#0, %w1t : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %hb = dtc.add %h, %b1 : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %a = dtc.tanh %hb : tensor<2x4x16xf32>
  %w2t = dtc.transpose %w2 permutation = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  %y = dtc.matmul %a, %w2t : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  %r = dtc.add %x, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %sq = dtc.mul %r, %r : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

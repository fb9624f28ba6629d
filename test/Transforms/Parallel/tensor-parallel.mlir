// RUN: dtc-opt %s --dtc-autodiff --dtc-tensor-parallel=tp=2 --split-input-file --verify-diagnostics | FileCheck %s
// RUN: dtc-opt %s --dtc-autodiff --dtc-tensor-parallel=tp=4 --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=TP4-WARN
// RUN: dtc-opt %s --dtc-autodiff --dtc-tensor-parallel=tp=4 --split-input-file 2>/dev/null | FileCheck %s --check-prefix=TP4

// An MLP block: the projection that reads the norm is column-parallel
// (weight and bias split by output features), the one that reads its
// output row-parallel. One all-reduce forward (before the residual add),
// one backward (the column's input gradient, read by the norm's backward),
// and the split weights' gradients stay split.
// CHECK: dtc.mesh @mesh ["tp" = 2]
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: tensor<8x8xf32> {dtc.param = "fc.weight", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], []]>}
// CHECK-SAME: tensor<8xf32> {dtc.param = "fc.bias", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"]]>}
// CHECK-SAME: tensor<8x8xf32> {dtc.param = "out.weight", dtc.sharding = #dtc.sharding<@mesh, {{\[}}[], ["tp"]]>}
// CHECK-SAME: tensor<8x8xf32> {dtc.grad = "fc.weight"}, tensor<8xf32> {dtc.grad = "fc.bias"}, tensor<8x8xf32> {dtc.grad = "out.weight"}
// CHECK-SAME: attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>}
// CHECK: dtc.matmul {{.*}} -> tensor<2x4x8xf32>
// CHECK: dtc.all_reduce {{.*}} {reason = "tensor-parallel: 'dtc.add' needs the whole value of a partial sum over 'tp'"} : tensor<2x4x8xf32>
// CHECK: dtc.all_reduce {{.*}} {reason = "tensor-parallel: 'dtc.matmul' makes a partial sum that several ops read"} : tensor<2x4x8xf32>
// CHECK-NOT: dtc.all_reduce
// CHECK-NOT: dtc.all_gather
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

// -----

// A fused QKV projection followed by an equal split into q, k and v: each
// rank takes its heads of each (the weight split in 3 blocks), the split
// and the reshapes into heads follow, and the gradient of the fused weight
// comes back from the concat of the three in the same blocks.
// CHECK-LABEL: func.func @attention(
// CHECK-SAME: tensor<12x8xf32> {dtc.param = "qkv.weight", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"], []] blocks = [3, 1]>}
// CHECK-SAME: tensor<12xf32> {dtc.param = "qkv.bias", dtc.sharding = #dtc.sharding<@mesh, {{\[}}["tp"]] blocks = [3]>}
// CHECK-SAME: tensor<8x4xf32> {dtc.param = "proj.weight", dtc.sharding = #dtc.sharding<@mesh, {{\[}}[], ["tp"]]>}
// CHECK: dtc.split %{{.*}} dim = 2 sizes = [4, 4, 4] : tensor<2x4x12xf32> -> tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
// CHECK: dtc.reshape %{{.*}} : tensor<2x4x4xf32> to tensor<2x4x1x4xf32>
// CHECK: dtc.softmax %{{.*}} dim = 3 : tensor<2x1x4x4xf32>
// CHECK: dtc.all_reduce
// CHECK: dtc.concat {{.*}} -> tensor<2x4x12xf32>
// CHECK: dtc.all_reduce
// CHECK-NOT: dtc.all_reduce
// CHECK-NOT: dtc.all_gather
// CHECK: return
// With 4 ranks, the 2 heads do not divide: the pair stays replicated and
// nothing is sent.
// TP4-WARN: warning: tensor-parallel: 'qkv.weight' stays replicated: 2 heads do not divide over 4 ranks
// TP4-WARN: warning: tensor-parallel: 'proj.weight' stays replicated: none of its inputs is column-parallel
// TP4-LABEL: func.func @attention(
// TP4-NOT: dtc.sharding
// TP4-NOT: dtc.all_reduce
// TP4: return
func.func @attention(%x: tensor<2x4x8xf32> {dtc.input = "x"},
                     %g: tensor<8xf32> {dtc.param = "ln.weight"}, %b: tensor<8xf32> {dtc.param = "ln.bias"},
                     %wqkv: tensor<24x8xf32> {dtc.param = "qkv.weight"}, %bqkv: tensor<24xf32> {dtc.param = "qkv.bias"},
                     %wo: tensor<8x8xf32> {dtc.param = "proj.weight"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %n:3 = dtc.layer_norm %x, %g, %b dim = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  %wt = dtc.transpose %wqkv permutation = [1, 0] : tensor<24x8xf32> -> tensor<8x24xf32>
  %h = dtc.matmul %n#0, %wt : (tensor<2x4x8xf32>, tensor<8x24xf32>) -> tensor<2x4x24xf32>
  %hb = dtc.add %h, %bqkv : (tensor<2x4x24xf32>, tensor<24xf32>) -> tensor<2x4x24xf32>
  %qkv:3 = dtc.split %hb dim = 2 sizes = [8, 8, 8] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
  %q4 = dtc.reshape %qkv#0 : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
  %k4 = dtc.reshape %qkv#1 : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
  %v4 = dtc.reshape %qkv#2 : tensor<2x4x8xf32> to tensor<2x4x2x4xf32>
  %q = dtc.transpose %q4 permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %kt = dtc.transpose %k4 permutation = [0, 2, 3, 1] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %v = dtc.transpose %v4 permutation = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %s = dtc.matmul %q, %kt : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = dtc.softmax %s dim = 3 : tensor<2x2x4x4xf32>
  %o = dtc.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %ot = dtc.transpose %o permutation = [0, 2, 1, 3] : tensor<2x2x4x4xf32> -> tensor<2x4x2x4xf32>
  %o3 = dtc.reshape %ot : tensor<2x4x2x4xf32> to tensor<2x4x8xf32>
  %wot = dtc.transpose %wo permutation = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %y = dtc.matmul %o3, %wot : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %r = dtc.add %x, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %sq = dtc.mul %r, %r : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A softmax across the column-parallel features cannot run on a part: its
// input is gathered (with the reason), it runs replicated, and the
// row-parallel projection takes this rank's part of its output (dtc.shard).
// CHECK-LABEL: func.func @softmax_features(
// CHECK: %[[H:.*]] = dtc.matmul
// CHECK: dtc.all_gather %[[H]] on @mesh axes = ["tp"] dim = 1 {dtc.resharding, reason = "tensor-parallel: 'dtc.softmax': it needs dimension 1 of operand #0 whole"} : tensor<2x8xf32> -> tensor<2x16xf32>
// CHECK: %[[S:.*]] = dtc.softmax {{.*}} : tensor<2x16xf32>
// CHECK: dtc.shard %[[S]] on @mesh axes = ["tp"] dim = 1 {reason = "{{[^"]*}} reads this rank{{.}}s part of operand #{{[0-9]+}}"} : tensor<2x16xf32> -> tensor<2x8xf32>
func.func @softmax_features(%x: tensor<2x8xf32> {dtc.input = "x"},
                            %g: tensor<8xf32> {dtc.param = "ln.weight"}, %b: tensor<8xf32> {dtc.param = "ln.bias"},
                            %w1: tensor<8x16xf32> {dtc.param = "w1"}, %w2: tensor<16x8xf32> {dtc.param = "w2"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %n:3 = dtc.layer_norm %x, %g, %b dim = 1 epsilon = 1.0e-05 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %h = dtc.matmul %n#0, %w1 : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  // expected-warning @+1 {{tensor-parallel: 'dtc.softmax' runs replicated on gathered operands: it needs dimension 1 of operand #0 whole}}
  %s = dtc.softmax %h dim = 1 : tensor<2x16xf32>
  %y = dtc.matmul %s, %w2 : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  %sq = dtc.mul %y, %y : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Dropout between a column- and a row-parallel projection runs on the
// rank's features, drawing by the global element index: it learns the whole
// shape and where the rank's features start.
// CHECK-LABEL: func.func @dropout_features(
// CHECK: %[[IOTA:.*]] = dtc.iota dim = 0 : tensor<16xi64>
// CHECK: %[[MINE:.*]] = dtc.shard %[[IOTA]] on @mesh axes = ["tp"] dim = 0 {reason = "where this rank{{.}}s chunk starts"} : tensor<16xi64> -> tensor<8xi64>
// CHECK: dtc.dropout %{{.*}}, %{{.*}} at %{{.*}} in [2, 16] ratio = 5.000000e-01 seed = 1 stream = 0 : (tensor<2x8xf32>, tensor<i64>, tensor<2xi64>) -> tensor<2x8xf32>
// CHECK-NOT: dtc.all_gather
func.func @dropout_features(%x: tensor<2x8xf32> {dtc.input = "x"}, %step: tensor<i64> {dtc.state = #dtc.state<step>},
                            %g: tensor<8xf32> {dtc.param = "ln.weight"}, %b: tensor<8xf32> {dtc.param = "ln.bias"},
                            %w1: tensor<8x16xf32> {dtc.param = "w1"}, %w2: tensor<16x8xf32> {dtc.param = "w2"})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %n:3 = dtc.layer_norm %x, %g, %b dim = 1 epsilon = 1.0e-05 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %h = dtc.matmul %n#0, %w1 : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  %d = dtc.dropout %h, %step ratio = 0.5 seed = 1 stream = 0 : (tensor<2x16xf32>, tensor<i64>) -> tensor<2x16xf32>
  %y = dtc.matmul %d, %w2 : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  %sq = dtc.mul %y, %y : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1] : tensor<2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

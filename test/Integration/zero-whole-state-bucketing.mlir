// ZeRO with bucketing where no optimizer state splits: the parameter, split
// over tp by the sharding spec, has 3 elements per rank, which dp=2 does
// not divide and ZeRO does not pad (it is split by another axis), so its
// state stays whole and its gradient keeps the all-reduce the update reads.
// Bucketing after dtc-zero has nothing to bucket and must not take that for
// a pass-order mistake (the random-graph tests, seed 264, found it did).
// RUN: echo '{"^p$": [["tp"]]}' > %t.json
// RUN: dtc-opt %s --dtc-training="mesh=tp=2,dp=2 loss=output:loss zero=2 tp-strategy=none sharding-spec=%t.json verify=1" -o %t.mlir 2>&1 | FileCheck %s
// CHECK: warning: ZeRO: the optimizer state of 'p' stays whole: no dimension of 'tensor<3xf32>' splits over dp=2, and one split by another axis is not padded
// CHECK: dtc-verify-partition: single-device step {{.*}} s, per-rank program on 4 simulated ranks (tp=2,dp=2)
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// IR: dtc.all_reduce {{.*}} on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of p (summed over the batch shards)"} : tensor<3xf32>
func.func @train_step(%x: tensor<4x6xf32> {dtc.input = "x"},
                      %p: tensor<6xf32> {dtc.param = "p"})
    -> (tensor<f32> {dtc.output = "loss"}) {
  %y = dtc.mul %x, %p : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %t = dtc.tanh %y : tensor<4x6xf32>
  %l = dtc.reduce_sum %t dims = [0, 1] : tensor<4x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}

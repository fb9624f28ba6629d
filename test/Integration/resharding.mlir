// Resharding instead of refusal. A softmax over the batch (dimension 0)
// cannot run on a shard of it: data parallelism and gradient accumulation
// gather its input (an all-gather over dp; the microbatches' parts
// concatenated), run it on the whole batch, and say so; --verify checks
// that the step still computes the single-device one (accumulation against
// the whole batch at once). --strict-sharding refuses instead, naming the
// op, the operand and the bytes.
// RUN: dtc-opt %s --dtc-training="loss=output:loss mesh=dp=2 verify=1" -o %t.dp 2>&1 | FileCheck %s --check-prefix=DP
// DP: warning: data-parallel: 'dtc.softmax' runs replicated on gathered operands: it needs dimension 0 of operand #0 whole
// DP: dtc-verify-partition: single-device step {{.*}} s, per-rank program on 2 simulated ranks (dp=2) {{.*}} s; worst relative error: loss
// RUN: FileCheck %s --check-prefix=DP-IR < %t.dp
// DP-IR: dtc.all_gather {{.*}} on @mesh axes = ["dp"] dim = 0 {dtc.resharding, reason = "data-parallel: 'dtc.softmax': it needs dimension 0 of operand #0 whole"} : tensor<2x3xf32> -> tensor<4x3xf32>
//
// RUN: dtc-opt %s --dtc-training="loss=output:loss grad-accum=2 verify=1" -o %t.acc 2>&1 | FileCheck %s --check-prefix=ACC
// ACC: warning: gradient accumulation: 'dtc.softmax' runs replicated on gathered operands
// ACC: dtc-verify-partition: single-device step {{.*}} s, per-rank program on one device, 2 microbatches {{.*}} s; worst relative error: loss
// RUN: FileCheck %s --check-prefix=ACC-IR < %t.acc
// The microbatches' halves of the softmax's input, in order:
// ACC-IR: %[[M0:.*]] = dtc.matmul {{.*}} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
// ACC-IR: %[[M1:.*]] = dtc.matmul {{.*}} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
// ACC-IR: dtc.concat %[[M0]], %[[M1]] dim = 0
// ACC-IR-NOT: dtc.all_gather
//
// RUN: dtc-opt %s --dtc-training="loss=output:loss mesh=dp=2 grad-accum=2 verify=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: dtc-verify-partition: single-device step {{.*}} s, per-rank program on 2 simulated ranks (dp=2), 2 microbatches {{.*}} s; worst relative error: loss
//
// RUN: not dtc-opt %s --dtc-training="loss=output:loss mesh=dp=2 strict-sharding=1" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not dtc-opt %s --dtc-training="loss=output:loss grad-accum=2 strict-sharding=1" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRICT-ACC
// STRICT: resharding.mlir:[[@LINE+7]]:8: error: data-parallel: --strict-sharding: 'dtc.softmax' would need operand #0 ('tensor<2x3xf32>' per rank, split along dimension 0 over 'dp') all-gathered, 24 bus bytes per step: it needs dimension 0 of operand #0 whole
// STRICT-ACC: error: gradient accumulation: --strict-sharding: 'dtc.softmax' would need operand #0 ('tensor<2x3xf32>' per rank, split along dimension 0 over 'microbatch') all-gathered, 24 bus bytes per step
func.func @train_step(%x: tensor<4x3xf32> {dtc.input = "x"},
                      %t: tensor<4x3xf32> {dtc.input = "t"},
                      %w: tensor<3x3xf32> {dtc.param = "w"})
    -> (tensor<f32> {dtc.output = "loss"}) {
  %h = dtc.matmul %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %s = dtc.softmax %h dim = 0 : tensor<4x3xf32>
  %p = dtc.mul %s, %t : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = dtc.reduce_sum %p dims = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

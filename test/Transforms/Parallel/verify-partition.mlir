// dtc-verify-partition (dtc-training's verify, dtc-compile --verify) runs the
// per-rank program on simulated ranks against the single-device step.
// dtc_test.mirror (test/lib) reverses the features but has, on purpose, the
// elementwise sharding rule of its trait: on tp=2 (the features of the
// column-parallel projection split) each rank mirrors its own half, so the
// step is wrong without any error from the partitioner. --verify names the
// op, the layout it ran on and where its operand came from. On dp=2 the rule
// does no harm (the batch is split, not the features) and the step agrees.
// RUN: not dtc-opt %s --dtc-training="mesh=tp=2 verify=1" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TP
// TP: dtc-verify-partition: single-device step {{.*}} s, per-rank program on 2 simulated ranks (tp=2) {{.*}} s; worst relative error: loss {{.*}}, gradients {{[0-9.]+}}e+00, updates
// TP: error: --verify: the per-rank program does not compute the single-device step: loss {{.*}} vs {{.*}} on one device (relative error {{.*}}); gradient of 'wte': relative L2 error
// TP: verify-partition.mlir:[[@LINE+18]]:8: error: --verify: the first op whose ranks' parts disagree with the single-device step: 'dtc_test.mirror', result tensor<4x8x8xf32> per rank, tensor<4x8x16xf32> on one device; closest layout: split along 2 over tp, off by {{.*}} (relative L2); no collective feeds it
// RUN: dtc-opt %s --dtc-training="mesh=dp=2 verify=1" -o %t.dp 2>&1 | FileCheck %s --check-prefix=DP
// DP: dtc-verify-partition: single-device step {{.*}} s, per-rank program on 2 simulated ranks (dp=2) {{.*}} s; worst relative error: loss
// The program it keeps is the one dtc-training builds without verify.
// RUN: dtc-opt %s --dtc-training="mesh=dp=2" -o %t.plain
// RUN: cmp %t.dp %t.plain
func.func @train_step(%ids: tensor<4x8xi64> {dtc.input = "ids"},
                      %wte: tensor<16x8xf32> {dtc.param = "wte"},
                      %w1: tensor<16x8xf32> {dtc.param = "w1"},
                      %w2: tensor<8x16xf32> {dtc.param = "w2"},
                      %g: tensor<8xf32> {dtc.param = "norm"},
                      %head: tensor<16x8xf32> {dtc.param = "head"})
    -> (tensor<4x8x16xf32> {dtc.output = "logits"}) {
  %x = dtc.gather %wte[%ids] dim = 0
      : (tensor<16x8xf32>, tensor<4x8xi64>) -> tensor<4x8x8xf32>
  %h = dtc.matmul %x, %w1 transpose_rhs
      : (tensor<4x8x8xf32>, tensor<16x8xf32>) -> tensor<4x8x16xf32>
  %t = dtc.tanh %h : tensor<4x8x16xf32>
  %a = dtc_test.mirror %t : tensor<4x8x16xf32>
  %y = dtc.matmul %a, %w2 transpose_rhs
      : (tensor<4x8x16xf32>, tensor<8x16xf32>) -> tensor<4x8x8xf32>
  %r = dtc.add %x, %y
      : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %n = dtc.rms_norm %r, %g dim = 2 epsilon = 1.0e-06
      : (tensor<4x8x8xf32>, tensor<8xf32>) -> tensor<4x8x8xf32>
  %logits = dtc.matmul %n, %head transpose_rhs
      : (tensor<4x8x8xf32>, tensor<16x8xf32>) -> tensor<4x8x16xf32>
  return %logits : tensor<4x8x16xf32>
}

// The bug --verify was built to catch (issue #24): Falcon's multi-query
// attention takes its query heads with a slice of a fused [batch, seq,
// H+2, head_dim] projection split over tp along the heads. Before the
// sharding-rule engine the slice's VJP, an update_slice of the query's
// gradient into zeros of the fused shape at global offsets, ran on each
// rank's part of the head axis, and the step trained wrong without an
// error. dtc_test.take and dtc_test.place (test/lib) are dtc.slice and
// dtc.update_slice with place keeping that old, wrong rule: --verify names
// dtc_test.place. With the real ops (the rule keeps the sliced dimension
// whole, so the gradient is gathered) the step agrees with one device.
// RUN: echo '{"^qkv$": [[], ["tp"]], "^out$": [["tp"], []]}' > %t.json
// RUN: not dtc-opt %s --dtc-training="mesh=tp=2 loss=output:loss tp-strategy=none sharding-spec=%t.json verify=1" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: --verify: the per-rank program does not compute the single-device step: gradient of 'qkv': relative L2 error
// CHECK: verify-partition-update-slice.mlir:[[@LINE+12]]:8: error: --verify: the first op whose ranks' parts disagree with the single-device step: 'dtc_test.place', result tensor<2x4x3x4xf32> per rank, tensor<2x4x6x4xf32> on one device; closest layout: split along 2 over tp
// RUN: sed -e 's/dtc_test.take %%heads starts = \[0, 0, 0, 0\]/dtc.slice %%heads starts = [0, 0, 0, 0] sizes = [2, 4, 4, 4] strides = [1, 1, 1, 1]/' %s > %t.real.mlir
// RUN: dtc-opt %t.real.mlir --dtc-training="mesh=tp=2 loss=output:loss tp-strategy=none sharding-spec=%t.json verify=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REAL
// REAL: warning: tensor-parallel: 'dtc.update_slice' runs replicated on gathered operands: it needs dimension 2 of operand #0 whole
// REAL: dtc-verify-partition: single-device step {{.*}} s, per-rank program on 2 simulated ranks (tp=2)
func.func @train_step(%x: tensor<2x4x8xf32> {dtc.input = "x"},
                      %qkv: tensor<8x24xf32> {dtc.param = "qkv"},
                      %scale: tensor<4x4xf32> {dtc.param = "scale"},
                      %out: tensor<16x8xf32> {dtc.param = "out"})
    -> (tensor<f32> {dtc.output = "loss"}) {
  %fused = dtc.matmul %x, %qkv : (tensor<2x4x8xf32>, tensor<8x24xf32>) -> tensor<2x4x24xf32>
  %heads = dtc.reshape %fused : tensor<2x4x24xf32> to tensor<2x4x6x4xf32>
  %q = dtc_test.take %heads starts = [0, 0, 0, 0] : tensor<2x4x6x4xf32> -> tensor<2x4x4x4xf32>
  %qs = dtc.mul %q, %scale : (tensor<2x4x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4x4xf32>
  %flat = dtc.reshape %qs : tensor<2x4x4x4xf32> to tensor<2x4x16xf32>
  %y = dtc.matmul %flat, %out : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  %sq = dtc.mul %y, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

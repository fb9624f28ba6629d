// A lookup with negative ids (counting from the end of the table, as
// ONNX's Gather allows) from a table split by rows over tp: each rank must
// make the ids positive before cutting them to its rows, or no rank holds
// those rows and their lookups come out zero (the sharding conformance
// suite's test_gather_negative_indices found this under mpirun: --verify
// draws ids below the table's rows, so the ids here carry their values).
// RUN: echo '{"^table$": [["tp"], []]}' > %t.json
// RUN: dtc-opt %s --dtc-training="mesh=tp=2 loss=output:loss tp-strategy=none sharding-spec=%t.json verify=1" -o %t.mlir 2>&1 | FileCheck %s
// CHECK: dtc-verify-partition: single-device step {{.*}} s, per-rank program on 2 simulated ranks (tp=2)
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// IR: dtc.all_reduce {{.*}} on @mesh axes = ["tp"] kind = sum {reason = "tensor-parallel: 'dtc.gather' from rows split over 'tp' (each rank has looked up its own)"}
func.func @train_step(%ids: tensor<2x3xi64> {dtc.input = "ids", dtc.value = dense<[[-1, 2, -6], [0, -3, 5]]> : tensor<2x3xi64>},
                      %table: tensor<6x4xf32> {dtc.param = "table"})
    -> (tensor<f32> {dtc.output = "loss"}) {
  %rows = dtc.gather %table[%ids] dim = 0 : (tensor<6x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %sq = dtc.mul %rows, %rows : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %l = dtc.reduce_sum %sq dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

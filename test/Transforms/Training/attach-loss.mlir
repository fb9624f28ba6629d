// RUN: dtc-opt %s --dtc-attach-loss | FileCheck %s

// Cross-entropy over the last dimension of the logits, averaged over the
// tokens whose label is not the ignore index.
// CHECK-LABEL: func.func @lm(
// CHECK-SAME: %[[IDS:.*]]: tensor<2x3x5xf32> {dtc.input = "x"}, %[[LABELS:.*]]: tensor<2x3xi64> {dtc.classes = 5 : i64, dtc.input = "labels"})
// CHECK-SAME: -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
// CHECK: %[[LOGP:.*]] = dtc.log_softmax %[[IDS]] dim = 2
// CHECK: %[[CLASSES:.*]] = dtc.iota dim = 2 : tensor<2x3x5xi64>
// CHECK: %[[COLUMN:.*]] = dtc.reshape %[[LABELS]] : tensor<2x3xi64> to tensor<2x3x1xi64>
// CHECK: %[[HOT:.*]] = dtc.compare eq, %[[CLASSES]], %[[COLUMN]]
// CHECK: %[[PICKED:.*]] = dtc.select %[[HOT]], %[[LOGP]]
// CHECK: %[[SUM:.*]] = dtc.reduce_sum %[[PICKED]] dims = [2]
// CHECK: %[[IGNORE:.*]] = dtc.constant dense<-100> : tensor<i64>
// CHECK: %[[KEEP:.*]] = dtc.compare ne, %[[LABELS]], %[[IGNORE]]
// CHECK: %[[W:.*]] = dtc.cast %[[KEEP]] : tensor<2x3xi1> to tensor<2x3xf32>
// CHECK: %[[NLL:.*]] = dtc.neg
// CHECK: %[[TOTAL:.*]] = dtc.reduce_sum %[[NLL]] dims = [0, 1]
// CHECK: %[[COUNT:.*]] = dtc.reduce_sum %[[W]] dims = [0, 1]
// CHECK: %[[LOSS:.*]] = dtc.div %[[TOTAL]], %[[COUNT]]
// CHECK: return %[[LOSS]] : tensor<f32>
func.func @lm(%x: tensor<2x3x5xf32> {dtc.input = "x"}) -> (tensor<2x3x5xf32> {dtc.output = "logits"}) {
  return %x : tensor<2x3x5xf32>
}


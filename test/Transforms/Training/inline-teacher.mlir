// RUN: dtc-opt %s --dtc-inline-teacher | FileCheck %s
// RUN: dtc-opt %s --dtc-inline-teacher --dtc-attach-loss="loss=distillation temperature=2.0 alpha=0.25" | FileCheck %s --check-prefix=LOSS

// The teacher's body runs inside the student's function on the student's
// input of the same name; its parameters are frozen and renamed.
// CHECK-NOT: func.func @teacher
// CHECK-LABEL: func.func @student(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xf32> {dtc.input = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x3xf32> {dtc.param = "w"}
// CHECK-SAME: %[[TW:[a-z0-9]+]]: tensor<4x3xf32> {dtc.param = "teacher/w", dtc.trainable = false, dtc.value = dense<1.000000e+00> : tensor<4x3xf32>}
// CHECK-SAME: -> (tensor<2x3xf32> {dtc.output = "logits"}, tensor<2x3xf32> {dtc.output = "teacher/logits"})
// CHECK: %[[T:.*]] = dtc.matmul %[[X]], %[[TW]]
// CHECK: %[[S:.*]] = dtc.matmul %[[X]], %[[W]]
// CHECK: return %[[S]], %[[T]]

// LOSS-LABEL: func.func @student(
// LOSS-SAME: -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
// LOSS-COUNT-3: dtc.log_softmax
// T^2 / tokens = 4 / 2, then alpha and 1 - alpha:
// LOSS-DAG: dtc.constant dense<2.000000e+00>
// LOSS-DAG: dtc.constant dense<2.500000e-01>
// LOSS-DAG: dtc.constant dense<7.500000e-01>
func.func @student(%x: tensor<2x4xf32> {dtc.input = "x"}, %w: tensor<4x3xf32> {dtc.param = "w"})
    -> (tensor<2x3xf32> {dtc.output = "logits"}) {
  %y = dtc.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
func.func @teacher(%x: tensor<2x4xf32> {dtc.input = "x"},
                   %w: tensor<4x3xf32> {dtc.param = "w", dtc.value = dense<1.0> : tensor<4x3xf32>})
    -> (tensor<2x3xf32> {dtc.output = "logits"}) {
  %y = dtc.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// RUN: dtc-opt %s --dtc-optimizer --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=ADAMW
// RUN: dtc-opt %s --dtc-optimizer="optimizer=sgd momentum=0.9 weight-decay=0" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=SGD
// RUN: dtc-opt %s --dtc-optimizer="optimizer=sgd weight-decay=0" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=PLAIN
// RUN: dtc-opt %s --dtc-optimizer="no-decay=^b clip-grad-norm=1.0" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=NODECAY

// ADAMW-LABEL: func.func @step(
// Each parameter and state argument is donated: its next value is the
// result its dtc.aliasing_output names (w's at 3, its moments' at 4 and 5,
// b's at 6-8, the step's at 9).
// ADAMW-SAME: %[[W:[a-z0-9]+]]: tensor<3xf32> {dtc.aliasing_output = 3 : i64, dtc.param = "w"}
// ADAMW-SAME: %{{.*}}: tensor<2xf32> {dtc.aliasing_output = 6 : i64, dtc.param = "b"}
// ADAMW-SAME: %[[STEP:[a-z0-9]+]]: tensor<i64> {dtc.aliasing_output = 9 : i64, dtc.state = #dtc.state<step>}
// ADAMW-SAME: %[[M:[a-z0-9]+]]: tensor<3xf32> {dtc.aliasing_output = 4 : i64, dtc.state = #dtc.state<exp_avg of "w">}
// ADAMW-SAME: %[[V:[a-z0-9]+]]: tensor<3xf32> {dtc.aliasing_output = 5 : i64, dtc.state = #dtc.state<exp_avg_sq of "w">}
// ADAMW-SAME: %{{.*}}: tensor<2xf32> {dtc.aliasing_output = 7 : i64, dtc.state = #dtc.state<exp_avg of "b">}, %{{.*}}: tensor<2xf32> {dtc.aliasing_output = 8 : i64, dtc.state = #dtc.state<exp_avg_sq of "b">}
// ADAMW-SAME: -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"}, tensor<2xf32> {dtc.grad = "b"},
// ADAMW-SAME: tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i64>, tensor<f32> {dtc.output = "learning_rate"})
// ADAMW-SAME: attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
// ADAMW: dtc.pow
// ADAMW: dtc.sqrt

// SGD-LABEL: func.func @step(
// SGD-SAME: {dtc.aliasing_output = 3 : i64, dtc.param = "w"}
// SGD-SAME: {dtc.aliasing_output = 4 : i64, dtc.state = #dtc.state<momentum_buffer of "w">}
// SGD-NOT: dtc.pow

// PLAIN-LABEL: func.func @step(
// PLAIN-NOT: momentum_buffer
// PLAIN: return

// With clipping, the squared norms of both gradients are summed.
// NODECAY-LABEL: func.func @step(
// NODECAY: dtc.sqrt
// NODECAY: dtc.sqrt
// NODECAY: dtc.min
func.func @step(%w: tensor<3xf32> {dtc.param = "w"}, %b: tensor<2xf32> {dtc.param = "b"},
                %gw: tensor<3xf32>, %gb: tensor<2xf32>, %l: tensor<f32>)
    -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"}, tensor<2xf32> {dtc.grad = "b"}) attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  return %l, %gw, %gb : tensor<f32>, tensor<3xf32>, tensor<2xf32>
}

// -----

// expected-error @+1 {{no gradient for parameter 'w' (run dtc-autodiff first)}}
func.func @no_grads(%w: tensor<3xf32> {dtc.param = "w"}, %l: tensor<f32>) -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  return %l : tensor<f32>
}

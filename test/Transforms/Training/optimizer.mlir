// RUN: dtc-opt %s --dtc-optimizer --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=ADAMW
// RUN: dtc-opt %s --dtc-optimizer="optimizer=sgd momentum=0.9 weight-decay=0" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=SGD
// RUN: dtc-opt %s --dtc-optimizer="optimizer=sgd weight-decay=0" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=PLAIN
// RUN: dtc-opt %s --dtc-optimizer="no-decay=^b clip-grad-norm=1.0" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=NODECAY

// ADAMW-LABEL: func.func @step(
// ADAMW-SAME: %[[W:[a-z0-9]+]]: tensor<3xf32> {dtc.param = "w"}
// ADAMW-SAME: %[[STEP:[a-z0-9]+]]: tensor<i64> {dtc.state = "step"}
// ADAMW-SAME: %[[M:[a-z0-9]+]]: tensor<3xf32> {dtc.state = "exp_avg/w"}
// ADAMW-SAME: %[[V:[a-z0-9]+]]: tensor<3xf32> {dtc.state = "exp_avg_sq/w"}
// ADAMW-SAME: %{{.*}}: tensor<2xf32> {dtc.state = "exp_avg/b"}, %{{.*}}: tensor<2xf32> {dtc.state = "exp_avg_sq/b"}
// ADAMW-SAME: -> (tensor<f32> {dtc.output = "loss"}, tensor<3xf32> {dtc.grad = "w"}, tensor<2xf32> {dtc.grad = "b"},
// ADAMW-SAME: tensor<3xf32> {dtc.update = "w"}, tensor<3xf32> {dtc.update = "exp_avg/w"}, tensor<3xf32> {dtc.update = "exp_avg_sq/w"},
// ADAMW-SAME: tensor<2xf32> {dtc.update = "b"}, tensor<2xf32> {dtc.update = "exp_avg/b"}, tensor<2xf32> {dtc.update = "exp_avg_sq/b"},
// ADAMW-SAME: tensor<i64> {dtc.update = "step"})
// ADAMW: dtc.pow
// ADAMW: dtc.sqrt

// SGD-LABEL: func.func @step(
// SGD-SAME: {dtc.state = "momentum_buffer/w"}
// SGD-SAME: {dtc.update = "w"}, tensor<3xf32> {dtc.update = "momentum_buffer/w"}
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
    -> (tensor<f32> {dtc.output = "loss"}, tensor<3xf32> {dtc.grad = "w"}, tensor<2xf32> {dtc.grad = "b"}) {
  return %l, %gw, %gb : tensor<f32>, tensor<3xf32>, tensor<2xf32>
}

// -----

// expected-error @+1 {{no gradient for parameter 'w' (run dtc-autodiff first)}}
func.func @no_grads(%w: tensor<3xf32> {dtc.param = "w"}, %l: tensor<f32>) -> (tensor<f32> {dtc.output = "loss"}) {
  return %l : tensor<f32>
}

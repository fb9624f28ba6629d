// RUN: dtc-opt %s --dtc-mixed-precision --verify-diagnostics
// RUN: not dtc-opt %s --pass-pipeline='builtin.module(func.func(dtc-pad-vocabulary{multiple=2}))' 2>&1 | FileCheck %s --check-prefix=PAD

// dtc-mixed-precision and dtc-pad-vocabulary change the forward, before
// dtc-attach-loss builds the loss over it; on a step that has its loss
// they say so instead of changing it.
// expected-error @+1 {{dtc-mixed-precision runs on the forward, before dtc-attach-loss: this function has a loss already}}
func.func @step(%w: tensor<3xf32> {dtc.param = "w"}) -> (tensor<f32>, tensor<3xf32> {dtc.output = "logits"})
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<3xf32>
}
// PAD: dtc-pad-vocabulary runs on the forward, before dtc-attach-loss: this function has a loss already

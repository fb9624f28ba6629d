// RUN: dtc-opt %s --dtc-master-weights --split-input-file --verify-diagnostics

// dtc-master-weights stores the gradients in bf16: it runs after
// dtc-autodiff, and says so when a trainable parameter has no gradient
// result yet.

// expected-error @+1 {{dtc-master-weights: parameter 'w' has no gradient result (run dtc-autodiff first)}}
func.func @before_autodiff(%x: tensor<2x3xbf16> {dtc.input = "x"},
                           %w: tensor<3xf32> {dtc.param = "w"}) -> tensor<f32>
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %wb = dtc.cast %w : tensor<3xf32> to tensor<3xbf16>
  %y = dtc.mul %x, %wb : (tensor<2x3xbf16>, tensor<3xbf16>) -> tensor<2x3xbf16>
  %s = dtc.reduce_sum %y dims = [0, 1] : tensor<2x3xbf16> -> tensor<bf16>
  %l = dtc.cast %s : tensor<bf16> to tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{@forward is not a training step: it has no dtc.step attribute (dtc-attach-loss makes one)}}
func.func @forward(%w: tensor<3xf32> {dtc.param = "w"}) -> tensor<3xf32> {
  return %w : tensor<3xf32>
}

// RUN: dtc-opt %s --dtc-attach-loss="loss=output:total" | FileCheck %s --check-prefix=OWN
// RUN: not dtc-opt %s --dtc-attach-loss="loss=output:logits" 2>&1 | FileCheck %s --check-prefix=NOTSCALAR
// NOTSCALAR: error: loss output 'logits' must be a scalar float result of the function


// The model's own loss: the function returns it alone.
// OWN-LABEL: func.func @own_loss
// OWN-SAME: -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
// OWN: return %{{.*}} : tensor<f32>
func.func @own_loss(%x: tensor<3xf32> {dtc.input = "x"}) -> (tensor<3xf32> {dtc.output = "logits"}, tensor<f32> {dtc.output = "total"}) {
  %s = dtc.reduce_sum %x dims = [0] : tensor<3xf32> -> tensor<f32>
  return %x, %s : tensor<3xf32>, tensor<f32>
}

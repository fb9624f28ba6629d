// RUN: dtc-opt %s --dtc-autodiff --split-input-file --verify-diagnostics --allow-unregistered-dialect | FileCheck %s

// A tied weight (used twice) gets one gradient, the sum of both uses; an
// unused parameter gets zeros; a frozen one gets none.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"}, tensor<2xf32> {dtc.grad = "unused"}) attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
// CHECK: dtc.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[G1:.*]] = dtc.mul %{{.*}}, %[[W:.*]] :
// CHECK: %[[G2:.*]] = dtc.mul %{{.*}}, %[[W]] :
// CHECK: %[[G:.*]] = dtc.add %[[G1]], %[[G2]]
// CHECK: %[[ZEROS:.*]] = dtc.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: return %{{.*}}, %[[G]], %[[ZEROS]]
func.func @tied(%w: tensor<3xf32> {dtc.param = "w"}, %unused: tensor<2xf32> {dtc.param = "unused"},
                %frozen: tensor<3xf32> {dtc.param = "frozen", dtc.trainable = false})
    -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %sq = dtc.mul %w, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %s = dtc.add %sq, %frozen : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %l = dtc.reduce_sum %s dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Masks and integer paths carry no gradient: the compare is not
// differentiated, only the select.
// CHECK-LABEL: func.func @masked
// CHECK-NOT: dtc.scatter_add
// CHECK: dtc.select
// CHECK: dtc.select
func.func @masked(%w: tensor<4xf32> {dtc.param = "w"}) -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %zero = dtc.constant dense<0.0> : tensor<f32>
  %keep = dtc.compare gt, %w, %zero : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
  %m = dtc.select %keep, %w, %zero : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %l = dtc.reduce_sum %m dims = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @no_vjp(%w: tensor<3xf32> {dtc.param = "w"}) -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  // expected-error @+1 {{'test.opaque' has no VJP but lies on a path from trainable parameters to the loss}}
  %y = "test.opaque"(%w) : (tensor<3xf32>) -> tensor<3xf32>
  %l = dtc.reduce_sum %y dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{dtc-autodiff needs a training step with a scalar float loss (dtc.step's loss; run dtc-attach-loss first)}}
func.func @not_a_loss(%w: tensor<3xf32> {dtc.param = "w"}) -> tensor<3xf32> {
  return %w : tensor<3xf32>
}

// -----

func.func @layer_norm_stats(%x: tensor<2x3xf32> {dtc.param = "x"}, %g: tensor<3xf32>) -> tensor<f32> attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  // expected-error @+1 {{cannot differentiate through the mean and inv_std_dev results}}
  %y, %mu, %r = dtc.layer_norm %x, %g dim = 1 epsilon = 1.0e-05 : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %l = dtc.reduce_sum %mu dims = [0, 1] : tensor<2x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

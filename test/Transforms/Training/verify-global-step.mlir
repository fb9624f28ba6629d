// RUN: dtc-opt %s --dtc-verify-global-step --split-input-file --verify-diagnostics | FileCheck %s

// dtc-verify-global-step ends the global-step phase: what the parallelism
// passes assume of the step they partition. A step that holds it passes
// unchanged; each case after it breaks one assumption.

// CHECK-LABEL: func.func @valid
// CHECK: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<3xf32>
func.func @valid(%x: tensor<4x3xf32> {dtc.input = "x"},
                 %w: tensor<3xf32> {dtc.param = "w"},
                 %c: tensor<3xf32> {dtc.param = "c", dtc.trainable = false})
    -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"})
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %y = dtc.mul %x, %w : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %z = dtc.add %y, %c : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %l = dtc.reduce_sum %z dims = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  %g = dtc.reduce_sum %x dims = [0] : tensor<4x3xf32> -> tensor<3xf32>
  return %l, %g : tensor<f32>, tensor<3xf32>
}

// -----

// expected-error @+1 {{dtc-verify-global-step: the step has no loss}}
func.func @no_loss(%w: tensor<3xf32> {dtc.param = "w"})
    -> (tensor<3xf32> {dtc.grad = "w"})
    attributes {dtc.step = #dtc.step<abi = 1>} {
  return %w : tensor<3xf32>
}

// -----

// expected-error @+1 {{dtc-verify-global-step: the loss is 'tensor<bf16>', not a tensor<f32> scalar}}
func.func @bf16_loss(%w: tensor<3xf32> {dtc.param = "w"})
    -> (tensor<bf16>, tensor<3xf32> {dtc.grad = "w"})
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
  %b = dtc.cast %l : tensor<f32> to tensor<bf16>
  return %b, %w : tensor<bf16>, tensor<3xf32>
}

// -----

// expected-error @+1 {{dtc-verify-global-step: the trainable parameter 'w' has no gradient}}
func.func @no_gradient(%w: tensor<3xf32> {dtc.param = "w"}) -> tensor<f32>
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{dtc-verify-global-step: the frozen parameter 'w' has a gradient}}
func.func @frozen_gradient(%w: tensor<3xf32> {dtc.param = "w", dtc.trainable = false})
    -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"})
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<3xf32>
}

// -----

// expected-error @+1 {{dtc-verify-global-step: the gradient of 'w' is 'tensor<3xbf16>', its parameter 'tensor<3xf32>'}}
func.func @gradient_type(%w: tensor<3xf32> {dtc.param = "w"})
    -> (tensor<f32>, tensor<3xbf16> {dtc.grad = "w"})
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
  %g = dtc.cast %w : tensor<3xf32> to tensor<3xbf16>
  return %l, %g : tensor<f32>, tensor<3xbf16>
}

// -----

module {
  dtc.mesh @mesh ["dp" = 2]
  // expected-error @+1 {{dtc-verify-global-step: the step already runs on a mesh}}
  func.func @on_a_mesh(%w: tensor<3xf32> {dtc.param = "w"})
      -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"})
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<3xf32>
  }
}

// -----

module {
  dtc.mesh @mesh ["dp" = 2]
  // expected-error @+1 {{dtc-verify-global-step: argument 0 is already laid out}}
  func.func @laid_out(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                      %w: tensor<3xf32> {dtc.param = "w"})
      -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"})
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
    %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<3xf32>
  }
}

// -----

module {
  dtc.mesh @mesh ["dp" = 2]
  func.func @collective(%w: tensor<3xf32> {dtc.param = "w"})
      -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"})
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
    %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
    // expected-error @+1 {{dtc-verify-global-step: 'dtc.all_reduce' in the global step (it belongs to a per-rank program)}}
    %s = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum : tensor<f32>
    return %s, %w : tensor<f32>, tensor<3xf32>
  }
}

// RUN: dtc-opt %s --dtc-verify-rank-program --split-input-file --verify-diagnostics | FileCheck %s

// dtc-verify-rank-program ends the per-rank phase: the step is one dtc-run
// binds and runs. A step that is passes unchanged; each case after it
// breaks one thing the runner or the IR needs.

// CHECK-LABEL: func.func @valid
// CHECK: dtc.all_reduce
module {
  dtc.mesh @mesh ["dp" = 2]
  func.func @valid(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                   %w: tensor<3xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64})
      -> (tensor<f32>, tensor<3xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %y = dtc.mul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %p = dtc.reduce_sum %y dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
    %l = dtc.all_reduce %p on @mesh axes = ["dp"] kind = sum : tensor<f32>
    return %l, %w : tensor<f32>, tensor<3xf32>
  }
}

// -----

// expected-error @+1 {{dtc-verify-rank-program: the trainable parameter 'w' has no update (dtc-optimizer has not run)}}
func.func @no_update(%w: tensor<3xf32> {dtc.param = "w"}) -> tensor<f32>
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The runner's own checks: an axis the mesh lacks.
module {
  dtc.mesh @mesh ["dp" = 2]
  // expected-error @+1 {{dtc-verify-rank-program: argument 0 ('x') is split over 'tp', no axis of the mesh}}
  func.func @unknown_axis(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["tp"], []]>},
                          %w: tensor<3xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64})
      -> (tensor<f32>, tensor<3xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %l = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<3xf32>
  }
}

// -----

module {
  dtc.mesh @mesh ["dp" = 2]
  dtc.mesh @other ["dp" = 2]
  func.func @other_mesh(%w: tensor<3xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64})
      -> (tensor<f32>, tensor<3xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %p = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
    // expected-error @+1 {{dtc-verify-rank-program: a collective over @other in a step that runs on @mesh}}
    %l = dtc.all_reduce %p on @other axes = ["dp"] kind = sum : tensor<f32>
    return %l, %w : tensor<f32>, tensor<3xf32>
  }
}

// -----

module {
  dtc.mesh @mesh ["dp" = 2]
  func.func @no_mesh(%w: tensor<3xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64})
      -> (tensor<f32>, tensor<3xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
    %p = dtc.reduce_sum %w dims = [0] : tensor<3xf32> -> tensor<f32>
    // expected-error @+1 {{dtc-verify-rank-program: a collective over @mesh in a step that runs on one device}}
    %l = dtc.all_reduce %p on @mesh axes = ["dp"] kind = sum : tensor<f32>
    return %l, %w : tensor<f32>, tensor<3xf32>
  }
}

// RUN: dtc-opt %s --dtc-zero=stage=1 --split-input-file --verify-diagnostics

// dtc-zero shards over the data-parallel axes (dp, ep) of the mesh the step records: a step
// with no mesh, a mesh without dp, and dp = 1 (nothing to shard over) are
// refused. (An unknown stage: zero-stage-option.mlir.)

// A step on one device.
// expected-error @+1 {{dtc-zero shards over the data-parallel ranks: compile with --mesh dp=N (or ep=N), N >= 2}}
module {
  func.func @one_device(%x: tensor<4x3xf32> {dtc.input = "x"},
                        %w: tensor<3xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64},
                        %m: tensor<3xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 2 : i64})
      -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
    %y = dtc.mul %x, %w : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %l = dtc.reduce_sum %y dims = [0, 1] : tensor<4x3xf32> -> tensor<f32>
    return %l, %w, %m : tensor<f32>, tensor<3xf32>, tensor<3xf32>
  }
}

// -----

// A mesh of tensor parallelism only.
// expected-error @+1 {{dtc-zero shards over the data-parallel ranks: compile with --mesh dp=N (or ep=N), N >= 2}}
module {
  dtc.mesh @mesh ["tp" = 2]
  func.func @no_dp_axis(%x: tensor<4x3xf32> {dtc.input = "x"},
                        %w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64},
                        %m: tensor<4xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 2 : i64})
      -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %l = dtc.reduce_sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w, %m : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// A dp axis of one rank.
// expected-error @+1 {{dtc-zero shards over the data-parallel ranks: compile with --mesh dp=N (or ep=N), N >= 2}}
module {
  dtc.mesh @mesh ["dp" = 1]
  func.func @dp_of_one(%x: tensor<4x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                       %w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64},
                       %m: tensor<4xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 2 : i64})
      -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %l = dtc.reduce_sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w, %m : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// No state to shard (SGD without momentum): every stage would change
// nothing.
module {
  dtc.mesh @mesh ["dp" = 2]
  // expected-error @+1 {{dtc-zero: no parameter has optimizer state to shard (SGD without momentum keeps none); ZeRO needs AdamW or SGD with momentum}}
  func.func @no_state(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                      %w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = 1 : i64})
      -> (tensor<f32>, tensor<4xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %l = dtc.reduce_sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

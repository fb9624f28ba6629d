// RUN: dtc-opt %s | dtc-opt | FileCheck %s

// The step ABI's attributes round-trip: #dtc.step's fields in any order
// (printed in declaration order, defaults elided), #dtc.state with and
// without a parameter, and the aliases of donated arguments.
dtc.mesh @mesh ["dp" = 2]

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %arg0: tensor<2x3xi64> {dtc.input = "ids"}
// CHECK-SAME: %arg1: tensor<4xf32> {dtc.aliasing_output = 1 : i64, dtc.param = "w"}
// CHECK-SAME: %arg2: tensor<i64> {dtc.aliasing_output = 4 : i64, dtc.state = #dtc.state<step>}
// CHECK-SAME: %arg3: tensor<4xf32> {dtc.aliasing_output = 2 : i64, dtc.state = #dtc.state<exp_avg of "w">}
// CHECK-SAME: %arg4: tensor<4xf32> {dtc.aliasing_output = 3 : i64, dtc.state = #dtc.state<master of "w">}
// CHECK-SAME: %arg5: tensor<f32> {dtc.state = #dtc.state<loss_scale>, dtc.value = dense<6.553600e+04> : tensor<f32>}
// CHECK-SAME: %arg6: tensor<i64> {dtc.state = #dtc.state<growth_tracker>}
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>)
// CHECK-SAME: attributes {dtc.step = #dtc.step<abi = 1, loss = 0, microbatches = 2, mesh = @mesh, rng = <seed = 7, counter = 2>, loss_scaling = <growth_interval = 2000>, stage = 1>}
func.func @step(%ids: tensor<2x3xi64> {dtc.input = "ids"},
                %w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = 1},
                %t: tensor<i64> {dtc.state = #dtc.state<step>, dtc.aliasing_output = 4},
                %m: tensor<4xf32> {dtc.state = #dtc.state<exp_avg of "w">, dtc.aliasing_output = 2},
                %master: tensor<4xf32> {dtc.state = #dtc.state<master of "w">, dtc.aliasing_output = 3},
                %scale: tensor<f32> {dtc.state = #dtc.state<loss_scale>, dtc.value = dense<65536.0> : tensor<f32>},
                %tracker: tensor<i64> {dtc.state = #dtc.state<growth_tracker>})
    -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>)
    attributes {dtc.step = #dtc.step<stage = 1, loss_scaling = <growth_interval = 2000>,
                                     rng = <counter = 2, seed = 7>, mesh = @mesh,
                                     microbatches = 2, loss = 0, abi = 1>} {
  %l = dtc.reduce_sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %l, %w, %m, %master, %t : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
}

// The fields that have defaults are elided; any ABI version parses (the
// runner, not the parser, refuses one it does not read).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: attributes {dtc.step = #dtc.step<abi = 0>}
func.func @forward(%x: tensor<f32> {dtc.input = "x"}) -> tensor<f32>
    attributes {dtc.step = #dtc.step<abi = 0, microbatches = 1>} {
  return %x : tensor<f32>
}

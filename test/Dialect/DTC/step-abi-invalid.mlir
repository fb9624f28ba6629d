// RUN: dtc-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{state 'exp_avg' belongs to a parameter: name it (of "name")}}
func.func @state_without_param(%m: tensor<4xf32> {dtc.state = #dtc.state<exp_avg>}) {
  return
}

// -----

// expected-error @+1 {{state 'loss_scale' belongs to no parameter, but names 'w'}}
func.func @state_with_param(%s: tensor<f32> {dtc.state = #dtc.state<loss_scale of "w">}) {
  return
}

// -----

// expected-error @+2 {{expected ::mlir::dtc::StateKind to be one of: step, exp_avg, exp_avg_sq, momentum_buffer, master, loss_scale, growth_tracker}}
// expected-error @+1 {{failed to parse DTC_StateAttr parameter 'kind'}}
func.func @unknown_kind(%m: tensor<4xf32> {dtc.state = #dtc.state<adam_m of "w">}) {
  return
}

// -----

// The old spelling, a name to parse, is refused.
// expected-error @+1 {{argument 0: dtc.state must be a #dtc.state, not "exp_avg/w"}}
func.func @string_state(%m: tensor<4xf32> {dtc.state = "exp_avg/w"}) {
  return
}

// -----

// expected-error @+1 {{argument 0 aliases result 1, but the function has 1}}
func.func @alias_out_of_range(%w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = 1}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 0 of type 'tensor<4xbf16>' aliases result 0 of another type, 'tensor<4xf32>'}}
func.func @alias_type(%w: tensor<4xbf16> {dtc.param = "w", dtc.aliasing_output = 0}) -> tensor<4xf32> {
  %f = dtc.cast %w : tensor<4xbf16> to tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument 0: dtc.aliasing_output must be a result index of a function}}
func.func @alias_not_index(%w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = "w"}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 is the next value of arguments 0 and 1}}
func.func @alias_twice(%a: tensor<4xf32> {dtc.param = "a", dtc.aliasing_output = 0},
                       %b: tensor<4xf32> {dtc.param = "b", dtc.aliasing_output = 0})
    -> tensor<4xf32> attributes {dtc.step = #dtc.step<abi = 1>} {
  return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{dtc.step: the loss is result 1, but the function has 1}}
func.func @loss_out_of_range(%x: tensor<f32>) -> tensor<f32>
    attributes {dtc.step = #dtc.step<abi = 1, loss = 1>} {
  return %x : tensor<f32>
}

// -----

// expected-error @+1 {{dtc.step: the loss, result 0, must be a float scalar, not 'tensor<3xf32>'}}
func.func @loss_not_scalar(%x: tensor<3xf32>) -> tensor<3xf32>
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  return %x : tensor<3xf32>
}

// -----

// expected-error @+1 {{dtc.step: the RNG counter, argument 0, must be the step state (tensor<i64>, #dtc.state<step>)}}
func.func @rng_counter(%x: tensor<i64> {dtc.input = "x"})
    attributes {dtc.step = #dtc.step<abi = 1, rng = <seed = 0, counter = 0>>} {
  return
}

// -----

// expected-error @+1 {{dtc.step: the mesh @nowhere is no dtc.mesh}}
func.func @no_mesh() attributes {dtc.step = #dtc.step<abi = 1, mesh = @nowhere>} {
  return
}

// -----

// expected-error @+1 {{dtc.step must be a #dtc.step, not 1 : i64}}
func.func @not_a_step() attributes {dtc.step = 1} {
  return
}

// -----

// expected-error @+1 {{microbatches must be at least 1, not 0}}
func.func @no_microbatches() attributes {dtc.step = #dtc.step<abi = 1, microbatches = 0>} {
  return
}

// -----

// expected-error @+2 {{growth_interval must be at least 1, not 0}}
// expected-error @+1 {{failed to parse DTC_StepAttr parameter 'loss_scaling'}}
func.func @no_growth() attributes {dtc.step = #dtc.step<abi = 1, loss_scaling = <growth_interval = 0>>} {
  return
}

// -----

// expected-error @+1 {{'dtc.mesh' op dtc.step belongs on a function}}
dtc.mesh @mesh ["dp" = 2] {dtc.step = #dtc.step<abi = 1>}

// RUN: dtc-opt %s --dtc-zero=stage=4 --verify-diagnostics

// ZeRO has stages 1 to 3: any other is refused by name, before the step
// is looked at (here a valid dp=2 step that stages 1-3 would shard).

// expected-error @+1 {{dtc-zero: stage 4 does not exist (1, 2 or 3)}}
module {
  dtc.mesh @mesh ["dp" = 2]
  func.func @step(%x: tensor<2x3xf32> {dtc.input = "x", dtc.sharding = #dtc.sharding<@mesh, [["dp"], []]>},
                  %w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = 2 : i64},
                  %m: tensor<4xf32> {dtc.state = #dtc.state<momentum_buffer of "w">, dtc.aliasing_output = 3 : i64})
      -> (tensor<f32>, tensor<4xf32> {dtc.grad = "w"}, tensor<4xf32>, tensor<4xf32>)
      attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
    %l = dtc.reduce_sum %x dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
    %loss = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0 (summed over the batch shards)"} : tensor<f32>
    %zero = dtc.constant dense<0.0> : tensor<4xf32>
    %g = dtc.all_reduce %zero on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of w (summed over the batch shards)"} : tensor<4xf32>
    %beta = dtc.constant dense<0.9> : tensor<f32>
    %m1 = dtc.mul %m, %beta : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %mnew = dtc.add %m1, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %wnew = dtc.sub %w, %mnew : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %loss, %g, %wnew, %mnew : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}

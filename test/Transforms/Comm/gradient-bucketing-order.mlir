// RUN: dtc-opt %s --pass-pipeline='builtin.module(func.func(dtc-bucket-gradients{bucket-mb=1}))' --verify-diagnostics

// After dtc-optimizer the update reads each gradient's sum, which then
// cannot move into a bucket: the pass says so instead of leaving every
// all-reduce as it was.
dtc.mesh @mesh ["dp" = 2]
// expected-error @+1 {{dtc-bucket-gradients: the sum of the gradient of 'w' is read by the update already: run dtc-bucket-gradients before dtc-optimizer (or, under ZeRO, after dtc-zero)}}
func.func @step(%w: tensor<4xf32> {dtc.param = "w", dtc.aliasing_output = 2 : i64},
                %l: tensor<f32>)
    -> (tensor<f32>, tensor<4xf32> {dtc.grad = "w"}, tensor<4xf32>)
    attributes {dtc.step = #dtc.step<abi = 1, loss = 0, mesh = @mesh>} {
  %g = dtc.mul %w, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = dtc.all_reduce %g on @mesh axes = ["dp"] kind = sum : tensor<4xf32>
  %new = dtc.sub %w, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %l, %s, %new : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

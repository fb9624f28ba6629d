// RUN: not dtc-opt %s --dtc-optimizer="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: unknown optimizer 'lamb' (adamw or sgd)
// RUN: not dtc-opt %s --dtc-optimizer="schedule=step" 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: error: unknown schedule 'step' (constant or warmup-cosine)
// RUN: not dtc-opt %s --dtc-optimizer="no-decay=(" 2>&1 | FileCheck %s --check-prefix=REGEX
// REGEX: error: invalid no-decay regex:
func.func @f(%w: tensor<3xf32> {dtc.param = "w"}, %g: tensor<3xf32>, %l: tensor<f32>)
    -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"}) attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  return %l, %g : tensor<f32>, tensor<3xf32>
}

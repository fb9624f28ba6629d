// RUN: not dtc-opt %s --dtc-optimizer="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: for the --optimizer option: Cannot find option named 'lamb'!
// RUN: not dtc-opt %s --dtc-optimizer="schedule=step" 2>&1 | FileCheck %s --check-prefix=SCHED
// SCHED: for the --schedule option: Cannot find option named 'step'!
// RUN: not dtc-opt %s --dtc-optimizer="no-decay=(" 2>&1 | FileCheck %s --check-prefix=REGEX
// REGEX: error: invalid no-decay regex:
func.func @f(%w: tensor<3xf32> {dtc.param = "w"}, %g: tensor<3xf32>, %l: tensor<f32>)
    -> (tensor<f32>, tensor<3xf32> {dtc.grad = "w"}) attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  return %l, %g : tensor<f32>, tensor<3xf32>
}

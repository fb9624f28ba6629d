// RUN: not dtc-opt %s --dtc-inline-teacher 2>&1 | FileCheck %s
// CHECK: error: the teacher's input 'ids' of type 'tensor<2x4xi64>' is not an input of the student
func.func @student(%x: tensor<2x4xf32> {dtc.input = "x"}) -> (tensor<2x4xf32> {dtc.output = "logits"}) {
  return %x : tensor<2x4xf32>
}
func.func @teacher(%ids: tensor<2x4xi64> {dtc.input = "ids"}) -> (tensor<2x4xi64> {dtc.output = "logits"}) {
  return %ids : tensor<2x4xi64>
}

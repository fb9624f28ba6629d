// RUN: dtc-opt %s --pass-pipeline='builtin.module(func.func(dtc-bucket-gradients{bucket-mb=0.00005}))' | FileCheck %s
// RUN: dtc-opt %s --pass-pipeline='builtin.module(func.func(dtc-bucket-gradients{bucket-mb=0}))' | FileCheck %s --check-prefix=OFF

// Buckets of 52 bytes, filled in the order the gradients are made: c (32
// bytes) and b (16) share one, all-reduced right after b; a (24) would
// overflow it and keeps its own. The loss's all-reduce is no gradient.
dtc.mesh @mesh ["dp" = 2]
// CHECK-LABEL: func.func @step(
// CHECK: %[[C:.*]] = dtc.mul %arg2
// CHECK-NEXT: %[[B:.*]] = dtc.mul %arg1
// CHECK-NEXT: %[[CF:.*]] = dtc.reshape %[[C]] : tensor<8xf32> to tensor<8xf32>
// CHECK-NEXT: %[[BF:.*]] = dtc.reshape %[[B]] : tensor<4xf32> to tensor<4xf32>
// CHECK-NEXT: %[[P:.*]] = dtc.concat %[[CF]], %[[BF]] dim = 0
// CHECK-NEXT: %[[S:.*]] = dtc.all_reduce %[[P]] on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient bucket 1 of 1 (48 bytes): c, b"} : tensor<12xf32>
// CHECK-NEXT: %[[SC:.*]] = dtc.slice %[[S]] starts = [0] sizes = [8] strides = [1]
// CHECK-NEXT: %[[GC:.*]] = dtc.reshape %[[SC]]
// CHECK-NEXT: %[[SB:.*]] = dtc.slice %[[S]] starts = [8] sizes = [4] strides = [1]
// CHECK-NEXT: %[[GB:.*]] = dtc.reshape %[[SB]]
// CHECK: %[[L:.*]] = dtc.all_reduce {{.*}} {reason = "data-parallel: result 0"} : tensor<f32>
// CHECK-NEXT: %[[GA:.*]] = dtc.all_reduce {{.*}} {reason = "data-parallel: gradient of a"} : tensor<2x3xf32>
// CHECK-NEXT: return %[[L]], %[[GA]], %[[GB]], %[[GC]]
// OFF-COUNT-4: dtc.all_reduce
// OFF-NOT: dtc.concat
func.func @step(%a: tensor<2x3xf32>, %b: tensor<4xf32>, %c: tensor<8xf32>, %l: tensor<f32>)
    -> (tensor<f32>, tensor<2x3xf32> {dtc.grad = "a"},
        tensor<4xf32> {dtc.grad = "b"}, tensor<8xf32> {dtc.grad = "c"}) attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %gc = dtc.mul %c, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %gb = dtc.mul %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %ga = dtc.mul %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %sl = dtc.all_reduce %l on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: result 0"} : tensor<f32>
  %sa = dtc.all_reduce %ga on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of a"} : tensor<2x3xf32>
  %sb = dtc.all_reduce %gb on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of b"} : tensor<4xf32>
  %sc = dtc.all_reduce %gc on @mesh axes = ["dp"] kind = sum {reason = "data-parallel: gradient of c"} : tensor<8xf32>
  return %sl, %sa, %sb, %sc : tensor<f32>, tensor<2x3xf32>, tensor<4xf32>, tensor<8xf32>
}

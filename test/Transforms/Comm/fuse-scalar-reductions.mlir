// RUN: dtc-opt %s --dtc-fuse-scalar-reductions | FileCheck %s

// Three scalar sums whose inputs all exist before any result is read: one
// call, right after the last input, its reason counting theirs. The max
// (another reduction) and the sum made from a fused result (its input is
// made after a result is read) keep their own calls.
dtc.mesh @mesh ["dp" = 2]
// CHECK-LABEL: func.func @step(
// CHECK: %[[A:.*]] = dtc.reduce_sum %arg0
// CHECK: %[[B:.*]] = dtc.reduce_sum %arg1
// CHECK: %[[C:.*]] = dtc.reduce_sum %arg2
// CHECK-NEXT: %[[RA:.*]] = dtc.reshape %[[A]] : tensor<f32> to tensor<1xf32>
// CHECK-NEXT: %[[RB:.*]] = dtc.reshape %[[B]] : tensor<f32> to tensor<1xf32>
// CHECK-NEXT: %[[RC:.*]] = dtc.reshape %[[C]] : tensor<f32> to tensor<1xf32>
// CHECK-NEXT: %[[P:.*]] = dtc.concat %[[RA]], %[[RB]], %[[RC]] dim = 0
// CHECK-NEXT: %[[S:.*]] = dtc.all_reduce %[[P]] on @mesh axes = ["dp"] kind = sum {reason = "3 scalars in one call: norm (x2); count"} : tensor<3xf32>
// CHECK: dtc.all_reduce %{{.*}} on @mesh axes = ["dp"] kind = max {reason = "largest"} : tensor<f32>
// CHECK: dtc.all_reduce %{{.*}} on @mesh axes = ["dp"] kind = sum {reason = "later"} : tensor<f32>
// CHECK-NOT: dtc.all_reduce
func.func @step(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = dtc.reduce_sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
  %sa = dtc.all_reduce %a on @mesh axes = ["dp"] kind = sum {reason = "norm"} : tensor<f32>
  %b = dtc.reduce_sum %y dims = [0] : tensor<4xf32> -> tensor<f32>
  %sb = dtc.all_reduce %b on @mesh axes = ["dp"] kind = sum {reason = "norm"} : tensor<f32>
  %c = dtc.reduce_sum %z dims = [0] : tensor<4xf32> -> tensor<f32>
  %sc = dtc.all_reduce %c on @mesh axes = ["dp"] kind = sum {reason = "count"} : tensor<f32>
  %m = dtc.all_reduce %c on @mesh axes = ["dp"] kind = max {reason = "largest"} : tensor<f32>
  %ab = dtc.add %sa, %sb : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %d = dtc.mul %ab, %sc : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %sd = dtc.all_reduce %d on @mesh axes = ["dp"] kind = sum {reason = "later"} : tensor<f32>
  %e = dtc.add %sd, %m : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %e, %sa, %sc : tensor<f32>, tensor<f32>, tensor<f32>
}

// RUN: dtc-opt %s --split-input-file --verify-diagnostics --dtc-sort-experts="bound=3 groups=2" | FileCheck %s
// RUN: dtc-opt %s --split-input-file --verify-diagnostics --dtc-sort-experts="bound=3 groups=2 zero-empty-slots=1" | FileCheck %s --check-prefix=ZEROED

// Two experts on 8 rows in 2 routing groups of 4, each expert's buffer 3
// rows a group: the rows are gathered into [2 experts, 2 x 3, 4], the
// expert matmul runs on them, and they are scattered back to [2, 8, 4]
// before the mask.
// CHECK-LABEL: func.func @moe
// CHECK: %[[PLACE:.*]] = dtc.cumsum %{{.*}} dim = 2 : tensor<2x2x4xf32>
// CHECK: dtc.scatter_elements_add {{.*}} : (tensor<2x2x4xf32>, tensor<2x2x4xi64>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
// CHECK: dtc.reduce_sum {{.*}} dims = [1] {dtc.expert_overflow} : tensor<2x2xf32> -> tensor<2xf32>
// CHECK: dtc.gather_elements {{.*}} dim = 1 : (tensor<2x4x4xf32>, tensor<2x6x4xi64>) -> tensor<2x6x4xf32>
// CHECK: %[[Y:.*]] = dtc.matmul %{{.*}}, %arg1 : (tensor<2x6x4xf32>, tensor<2x4x4xf32>) -> tensor<2x6x4xf32>
// CHECK: dtc.mul %[[Y]], %{{.*}} : (tensor<2x6x4xf32>, tensor<2x6x1xf32>) -> tensor<2x6x4xf32>
// CHECK: dtc.scatter_elements_add {{.*}} -> tensor<2x2x4x4xf32>
// CHECK: dtc.mul %{{.*}}, %[[MASK:.*]] : (tensor<2x8x4xf32>, tensor<2x8x1xf32>)
// CHECK-NOT: tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
// CHECK: return
// Buffers that are exchanged (under ep) have the gathered rows of empty
// slots zeroed too, so that their exchanges send the filled rows only:
// ZEROED-LABEL: func.func @moe
// ZEROED: dtc.gather_elements {{.*}} -> tensor<2x6x4xf32>
// ZEROED: %[[FILLED:.*]] = dtc.reshape %{{.*}} : tensor<2x2x3xf32> to tensor<2x6x1xf32>
// ZEROED: %[[IN:.*]] = dtc.mul %{{.*}}, %[[FILLED]] : (tensor<2x6x4xf32>, tensor<2x6x1xf32>) -> tensor<2x6x4xf32>
// ZEROED: dtc.matmul %[[IN]], %arg1
func.func @moe(%x: tensor<8x4xf32> {dtc.input = "x"}, %w: tensor<2x4x4xf32>,
               %choice: tensor<8x1xi64> {dtc.input = "choice"}) -> tensor<8x4xf32> {
  %xr = dtc.reshape %x : tensor<8x4xf32> to tensor<1x8x4xf32>
  %y = dtc.matmul %xr, %w : (tensor<1x8x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32>
  %ids = dtc.iota dim = 0 : tensor<2x1x1xi64>
  %c = dtc.reshape %choice : tensor<8x1xi64> to tensor<1x8x1xi64>
  %chosen = dtc.compare eq, %ids, %c : (tensor<2x1x1xi64>, tensor<1x8x1xi64>) -> tensor<2x8x1xi1>
  %mask = dtc.cast %chosen : tensor<2x8x1xi1> to tensor<2x8x1xf32>
  %ym = dtc.mul %y, %mask : (tensor<2x8x4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
  %sum = dtc.reduce_sum %ym dims = [0] : tensor<2x8x4xf32> -> tensor<8x4xf32>
  return %sum : tensor<8x4xf32>
}

// -----

// A softmax over the rows mixes them: the rows cannot be sorted.
func.func @mixes_rows(%x: tensor<8x4xf32> {dtc.input = "x"}, %w: tensor<2x4x4xf32>,
                      %choice: tensor<8x1xi64> {dtc.input = "choice"}) -> tensor<8x4xf32> {
  %xr = dtc.reshape %x : tensor<8x4xf32> to tensor<1x8x4xf32>
  %y = dtc.matmul %xr, %w : (tensor<1x8x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32>
  // expected-error @+1 {{--expert-bound: cannot sort the mixture's rows by expert: 'dtc.softmax' does not compute each (token, choice) row from that row alone}}
  %s = dtc.softmax %y dim = 1 : tensor<2x8x4xf32>
  %ids = dtc.iota dim = 0 : tensor<2x1x1xi64>
  %c = dtc.reshape %choice : tensor<8x1xi64> to tensor<1x8x1xi64>
  %chosen = dtc.compare eq, %ids, %c : (tensor<2x1x1xi64>, tensor<1x8x1xi64>) -> tensor<2x8x1xi1>
  %mask = dtc.cast %chosen : tensor<2x8x1xi1> to tensor<2x8x1xf32>
  %ym = dtc.mul %s, %mask : (tensor<2x8x4xf32>, tensor<2x8x1xf32>) -> tensor<2x8x4xf32>
  %sum = dtc.reduce_sum %ym dims = [0] : tensor<2x8x4xf32> -> tensor<8x4xf32>
  return %sum : tensor<8x4xf32>
}

// -----

// expected-error @+1 {{--expert-bound needs a mixture of experts in the loop form}}
func.func @dense(%x: tensor<8x4xf32> {dtc.input = "x"}, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %y = dtc.matmul %x, %w : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

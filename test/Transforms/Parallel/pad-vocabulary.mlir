// RUN: dtc-opt %s --pass-pipeline='builtin.module(func.func(dtc-pad-vocabulary{multiple=3}))' --split-input-file -verify-diagnostics | FileCheck %s

// A tied embedding and LM head of 4 rows padded to 6: the table gets two
// (zero) rows and records its real rows, the lookup is unchanged, the
// logits widen to 6 and the padded ones are -inf.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<6x8xf32> {dtc.param = "wte", dtc.unpadded_rows = 4 : i64}
// CHECK-SAME: -> (tensor<2x3x6xf32> {dtc.output = "logits"})
// CHECK: dtc.gather %[[W]][%{{.*}}] dim = 0 : (tensor<6x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
// CHECK: %[[T:.*]] = dtc.transpose %[[W]] permutation = [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
// CHECK: %[[L:.*]] = dtc.matmul %{{.*}}, %[[T]] : (tensor<2x3x8xf32>, tensor<8x6xf32>) -> tensor<2x3x6xf32>
// The mask is computed, not stored (a vocabulary-sized constant would make
// compile time grow with the vocabulary): columns below 4 add 0, the rest -inf.
// CHECK: %[[C:.*]] = dtc.iota dim = 0 : tensor<6xi64>
// CHECK: %[[R:.*]] = dtc.constant dense<4> : tensor<i64>
// CHECK: %[[IN:.*]] = dtc.compare lt, %[[C]], %[[R]]
// CHECK: %[[Z:.*]] = dtc.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[NINF:.*]] = dtc.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[M:.*]] = dtc.select %[[IN]], %[[Z]], %[[NINF]] : (tensor<6xi1>, tensor<f32>, tensor<f32>) -> tensor<6xf32>
// CHECK: %[[P:.*]] = dtc.add %[[L]], %[[M]]
// CHECK: return %[[P]]
// expected-remark @+1 {{padded the vocabulary of 'wte' from 4 to 6 rows (a multiple of 3)}}
func.func @tied(%ids: tensor<2x3xi64> {dtc.input = "ids"}, %w: tensor<4x8xf32> {dtc.param = "wte"})
    -> (tensor<2x3x4xf32> {dtc.output = "logits"}) {
  %x = dtc.gather %w[%ids] dim = 0 : (tensor<4x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
  %t = dtc.transpose %w permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %l = dtc.matmul %x, %t : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  return %l : tensor<2x3x4xf32>
}

// -----

// A vocabulary read by anything but lookups and the head cannot be padded.
func.func @other_use(%ids: tensor<2x3xi64> {dtc.input = "ids"}, %w: tensor<4x8xf32> {dtc.param = "wte"})
    -> (tensor<2x3x4xf32> {dtc.output = "logits"}, tensor<f32> {dtc.output = "norm"}) {
  %x = dtc.gather %w[%ids] dim = 0 : (tensor<4x8xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
  %t = dtc.transpose %w permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %l = dtc.matmul %x, %t : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
  // expected-error @+1 {{cannot pad the vocabulary of 'wte' to 6 rows: it is read by 'dtc.reduce_sum'}}
  %n = dtc.reduce_sum %w dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l, %n : tensor<2x3x4xf32>, tensor<f32>
}

// -----

// A head read directly by the product (a Gemm with transB imports so): its
// rows are padded from 5 to 6 as well.
// CHECK-LABEL: func.func @gemm_head
// CHECK-SAME: %{{.*}}: tensor<6x8xf32> {dtc.param = "head", dtc.unpadded_rows = 5 : i64}
// CHECK-SAME: -> (tensor<2x6xf32> {dtc.output = "logits"})
// CHECK: %[[Y:.*]] = dtc.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>
// CHECK: %[[C:.*]] = dtc.iota dim = 0 : tensor<6xi64>
// CHECK: %[[R:.*]] = dtc.constant dense<5> : tensor<i64>
// CHECK: %[[IN:.*]] = dtc.compare lt, %[[C]], %[[R]]
// CHECK: %[[M:.*]] = dtc.select %[[IN]]
// CHECK: %[[L:.*]] = dtc.add %[[Y]], %[[M]]
// CHECK: return %[[L]]
// expected-remark @+1 {{padded the vocabulary of 'head' from 5 to 6 rows (a multiple of 3)}}
func.func @gemm_head(%x: tensor<2x8xf32> {dtc.input = "x"}, %w: tensor<5x8xf32> {dtc.param = "head"})
    -> (tensor<2x5xf32> {dtc.output = "logits"}) {
  %y = dtc.matmul %x, %w transpose_rhs : (tensor<2x8xf32>, tensor<5x8xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

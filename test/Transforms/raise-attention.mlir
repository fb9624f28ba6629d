// RUN: dtc-opt %s --pass-pipeline="builtin.module(func.func(dtc-raise-attention))" -split-input-file | FileCheck %s

// GPT-2's form: k transposed from [b, s, h, d] to [b, h, d, s] in one go,
// scaled by a division by sqrt(d) written as 8^0.5.
// CHECK-LABEL: func @gpt2
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x8xf32>, %[[K:.*]]: tensor<2x8x4x8xf32>, %[[V:.*]]: tensor<2x4x8x8xf32>)
// CHECK: %[[KT:.*]] = dtc.transpose %[[K]] permutation = [0, 2, 3, 1]
// CHECK: %[[KB:.*]] = dtc.transpose %[[KT]] permutation = [0, 1, 3, 2]
// CHECK: %[[O:.*]], %{{.*}} = dtc.attention %[[Q]], %[[KB]], %[[V]] scale = 0.35355339
// CHECK-NOT: dtc.softmax
// CHECK: return %[[O]]
func.func @gpt2(%q: tensor<2x4x8x8xf32>, %k: tensor<2x8x4x8xf32>, %v: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %kt = dtc.transpose %k permutation = [0, 2, 3, 1] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %s = dtc.matmul %q, %kt : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %c8 = dtc.constant dense<8.0> : tensor<f32>
  %half = dtc.constant dense<0.5> : tensor<f32>
  %root = dtc.pow %c8, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %scaled = dtc.div %s, %root : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = dtc.softmax %scaled dim = 3 : tensor<2x4x8x8xf32>
  %o = dtc.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %o : tensor<2x4x8x8xf32>
}

// -----

// Llama's form: grouped-query k and v repeated (reshape, broadcast,
// reshape), k^T a transpose of the last two dimensions, an added mask.
// CHECK-LABEL: func @llama
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x8xf32>, %[[K:.*]]: tensor<2x2x8x8xf32>, %[[V:.*]]: tensor<2x2x8x8xf32>, %[[M:.*]]: tensor<8x8xf32>)
// CHECK-NEXT: %[[O:.*]], %{{.*}} = dtc.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] scale = 5.000000e-01 : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
// CHECK-NEXT: return %[[O]]
func.func @llama(%q: tensor<2x4x8x8xf32>, %k: tensor<2x2x8x8xf32>, %v: tensor<2x2x8x8xf32>, %mask: tensor<8x8xf32>) -> tensor<2x4x8x8xf32> {
  %k1 = dtc.reshape %k : tensor<2x2x8x8xf32> to tensor<2x2x1x8x8xf32>
  %k2 = dtc.broadcast %k1 : tensor<2x2x1x8x8xf32> to tensor<2x2x2x8x8xf32>
  %k3 = dtc.reshape %k2 : tensor<2x2x2x8x8xf32> to tensor<2x4x8x8xf32>
  %v1 = dtc.reshape %v : tensor<2x2x8x8xf32> to tensor<2x2x1x8x8xf32>
  %v2 = dtc.broadcast %v1 : tensor<2x2x1x8x8xf32> to tensor<2x2x2x8x8xf32>
  %v3 = dtc.reshape %v2 : tensor<2x2x2x8x8xf32> to tensor<2x4x8x8xf32>
  %kt = dtc.transpose %k3 permutation = [0, 1, 3, 2] : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %s = dtc.matmul %q, %kt : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %c = dtc.constant dense<2.0> : tensor<f32>
  %scaled = dtc.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %masked = dtc.add %scaled, %mask : (tensor<2x4x8x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = dtc.softmax %masked dim = 3 : tensor<2x4x8x8xf32>
  %o = dtc.matmul %p, %v3 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %o : tensor<2x4x8x8xf32>
}

// -----

// A boolean mask (where(mask, s, -1e4)), transpose_rhs, a multiplication
// by the scale, and dropout on the probabilities.
// CHECK-LABEL: func @bool_mask_dropout
// CHECK: dtc.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} dropout step %{{.*}} scale = 1.250000e-01 {dropout_ratio = 1.000000e-01 : f64, masked_value = -1.000000e+04 : f64, seed = 3 : i64, stream = 5 : i64}
// CHECK-NOT: dtc.dropout
func.func @bool_mask_dropout(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %keep: tensor<4x4xi1>, %step: tensor<i64>) -> tensor<1x2x4x8xf32> {
  %s = dtc.matmul %q, %k transpose_rhs : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %c = dtc.constant dense<0.125> : tensor<f32>
  %scaled = dtc.mul %c, %s : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %fill = dtc.constant dense<-1.0e4> : tensor<f32>
  %masked = dtc.select %keep, %scaled, %fill : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = dtc.softmax %masked dim = 3 : tensor<1x2x4x4xf32>
  %d = dtc.dropout %p, %step ratio = 1.0e-01 seed = 3 stream = 5 : (tensor<1x2x4x4xf32>, tensor<i64>) -> tensor<1x2x4x4xf32>
  %o = dtc.matmul %d, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// masked_fill(~mask, -inf) (nanoGPT's and bench/step_models.py's form):
// the constant where the condition holds, so the mask is the not's
// operand; a condition that is no not is inverted by a new one.
// CHECK-LABEL: func @masked_fill
// CHECK-SAME: %[[KEEP:[a-z0-9]+]]: tensor<4x4xi1>, %[[DROP:[a-z0-9]+]]: tensor<4x4xi1>)
// CHECK: dtc.attention %{{.*}}, %{{.*}}, %{{.*}} mask %[[KEEP]] scale = 1.000000e+00 {masked_value = 0xFFF0000000000000 : f64}
// CHECK: %[[INVERSE:.*]] = dtc.not %[[DROP]]
// CHECK: dtc.attention %{{.*}}, %{{.*}}, %{{.*}} mask %[[INVERSE]] scale = 1.000000e+00 {masked_value = -1.000000e+04 : f64}
// CHECK-NOT: dtc.softmax
func.func @masked_fill(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %keep: tensor<4x4xi1>, %drop: tensor<4x4xi1>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %s = dtc.matmul %q, %k transpose_rhs : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %inf = dtc.constant dense<0xFF800000> : tensor<f32>
  %not = dtc.not %keep : tensor<4x4xi1>
  %masked = dtc.select %not, %inf, %s : (tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = dtc.softmax %masked dim = 3 : tensor<1x2x4x4xf32>
  %o = dtc.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s2 = dtc.matmul %q, %k transpose_rhs : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %fill = dtc.constant dense<-1.0e4> : tensor<f32>
  %masked2 = dtc.select %drop, %fill, %s2 : (tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = dtc.softmax %masked2 dim = 3 : tensor<1x2x4x4xf32>
  %o2 = dtc.matmul %p2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %o2 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// Attention weights returned as an output: the chain stays.
// CHECK-LABEL: func @weights_returned
// CHECK-NOT: dtc.attention
// CHECK: dtc.softmax
func.func @weights_returned(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = dtc.matmul %q, %k transpose_rhs : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p = dtc.softmax %s dim = 3 : tensor<1x2x4x4xf32>
  %o = dtc.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// A softmax over another dimension, or of a rank-3 tensor, is no attention.
// CHECK-LABEL: func @not_attention
// CHECK-NOT: dtc.attention
func.func @not_attention(%x: tensor<2x4x4xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %p = dtc.softmax %x dim = 2 : tensor<2x4x4xf32>
  %o = dtc.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

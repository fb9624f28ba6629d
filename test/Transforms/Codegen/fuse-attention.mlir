// dtc-fuse-attention: a 16-bit attention whose probabilities only its
// backward reads becomes dtc.fused_attention (the result and each query
// row's logsumexp) and its backward dtc.fused_attention_grad (from the
// result and the logsumexps); the mask, dropout and softcap go along. f32
// attention, head dimensions the kernels do not tile, and probabilities
// something else reads stay.
// RUN: dtc-opt %s --dtc-fuse-attention | FileCheck %s

// CHECK-LABEL: func.func @fused
// CHECK-NOT: dtc.attention
// CHECK: %[[Y:.*]], %[[LSE:.*]] = dtc.fused_attention %arg0, %arg1, %arg2 mask %arg3 dropout step %arg5 scale = 2.500000e-01 {dropout_ratio = 1.000000e-01 : f64, seed = 3 : i64, softcap = 3.000000e+01 : f64, stream = 5 : i64} : {{.*}} -> (tensor<2x4x72x16xbf16>, tensor<2x4x72xf32>)
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = dtc.fused_attention_grad %arg0, %arg1, %arg2, %[[Y]], %[[LSE]], %arg4 mask %arg3 dropout step %arg5 scale = 2.500000e-01
// CHECK-NOT: dtc.attention
// CHECK: return %[[Y]], %[[DQ]], %[[DK]], %[[DV]]
func.func @fused(%q: tensor<2x4x72x16xbf16>, %k: tensor<2x2x72x16xbf16>,
                 %v: tensor<2x2x72x16xbf16>, %m: tensor<72x72xi1>,
                 %dy: tensor<2x4x72x16xbf16>, %step: tensor<i64>)
    -> (tensor<2x4x72x16xbf16>, tensor<2x4x72x16xbf16>,
        tensor<2x2x72x16xbf16>, tensor<2x2x72x16xbf16>) {
  %y, %p = dtc.attention %q, %k, %v mask %m dropout step %step scale = 0.25
      {dropout_ratio = 0.1 : f64, seed = 3 : i64, stream = 5 : i64, softcap = 30.0 : f64}
      : (tensor<2x4x72x16xbf16>, tensor<2x2x72x16xbf16>, tensor<2x2x72x16xbf16>, tensor<72x72xi1>, tensor<i64>)
      -> (tensor<2x4x72x16xbf16>, tensor<2x4x72x72xbf16>)
  %dq, %dk, %dv = dtc.attention_grad %q, %k, %v, %p, %dy mask %m dropout step %step scale = 0.25
      {dropout_ratio = 0.1 : f64, seed = 3 : i64, stream = 5 : i64, softcap = 30.0 : f64}
      : (tensor<2x4x72x16xbf16>, tensor<2x2x72x16xbf16>, tensor<2x2x72x16xbf16>, tensor<2x4x72x72xbf16>, tensor<2x4x72x16xbf16>, tensor<72x72xi1>, tensor<i64>)
      -> (tensor<2x4x72x16xbf16>, tensor<2x2x72x16xbf16>, tensor<2x2x72x16xbf16>)
  return %y, %dq, %dk, %dv : tensor<2x4x72x16xbf16>, tensor<2x4x72x16xbf16>, tensor<2x2x72x16xbf16>, tensor<2x2x72x16xbf16>
}

// CHECK-LABEL: func.func @stay
// CHECK-NOT: dtc.fused_attention
// CHECK: dtc.attention {{.*}} -> (tensor<1x2x4x16xf32>
// CHECK: dtc.attention {{.*}} -> (tensor<1x2x4x8xbf16>
// CHECK: dtc.attention {{.*}} -> (tensor<1x2x4x144xbf16>
// CHECK: %[[Y:.*]], %[[P:.*]] = dtc.attention {{.*}} -> (tensor<1x2x4x16xbf16>
// CHECK-NOT: dtc.fused_attention
// CHECK: return {{.*}}, %[[P]]
func.func @stay(%q: tensor<1x2x4x16xf32>, %q8: tensor<1x2x4x8xbf16>,
                %q144: tensor<1x2x4x144xbf16>, %q16: tensor<1x2x4x16xbf16>)
    -> (tensor<1x2x4x16xf32>, tensor<1x2x4x8xbf16>, tensor<1x2x4x144xbf16>,
        tensor<1x2x4x4xbf16>) {
  %y, %p = dtc.attention %q, %q, %q scale = 0.25 : (tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) -> (tensor<1x2x4x16xf32>, tensor<1x2x4x4xf32>)
  %g:3 = dtc.attention_grad %q, %q, %q, %p, %y scale = 0.25 : (tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32>) -> (tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>)
  %y8, %p8 = dtc.attention %q8, %q8, %q8 scale = 0.25 : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4x4xbf16>)
  %y144, %p144 = dtc.attention %q144, %q144, %q144 scale = 0.25 : (tensor<1x2x4x144xbf16>, tensor<1x2x4x144xbf16>, tensor<1x2x4x144xbf16>) -> (tensor<1x2x4x144xbf16>, tensor<1x2x4x4xbf16>)
  %y16, %p16 = dtc.attention %q16, %q16, %q16 scale = 0.25 : (tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>, tensor<1x2x4x16xbf16>) -> (tensor<1x2x4x16xbf16>, tensor<1x2x4x4xbf16>)
  return %g#0, %y8, %y144, %p16 : tensor<1x2x4x16xf32>, tensor<1x2x4x8xbf16>, tensor<1x2x4x144xbf16>, tensor<1x2x4x4xbf16>
}

// RUN: dtc-opt %s | dtc-opt | FileCheck %s
// RUN: dtc-opt %s --mlir-print-op-generic | dtc-opt | FileCheck %s

// Every dtc op parses, prints and parses again to the same form.

// CHECK-LABEL: func @constants
func.func @constants() -> (tensor<2xf32>, tensor<2x3xi64>, tensor<i1>) {
  // CHECK: dtc.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %0 = dtc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: dtc.iota dim = 1 : tensor<2x3xi64>
  %1 = dtc.iota dim = 1 : tensor<2x3xi64>
  // CHECK: dtc.constant dense<true> : tensor<i1>
  %2 = dtc.constant dense<true> : tensor<i1>
  return %0, %1, %2 : tensor<2xf32>, tensor<2x3xi64>, tensor<i1>
}

// CHECK-LABEL: func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<4xi32>, %[[B:.*]]: tensor<4xi1>, %[[H:.*]]: tensor<4xbf16>)
func.func @unary(%x: tensor<4xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>, %h: tensor<4xbf16>) {
  // CHECK: dtc.neg %[[I]] : tensor<4xi32>
  %0 = dtc.neg %i : tensor<4xi32>
  // CHECK: dtc.abs %[[X]] : tensor<4xf32>
  %1 = dtc.abs %x : tensor<4xf32>
  // CHECK: dtc.relu %[[H]] : tensor<4xbf16>
  %2 = dtc.relu %h : tensor<4xbf16>
  // CHECK: dtc.exp %[[X]] : tensor<4xf32>
  %3 = dtc.exp %x : tensor<4xf32>
  // CHECK: dtc.log %[[X]] : tensor<4xf32>
  %4 = dtc.log %x : tensor<4xf32>
  // CHECK: dtc.sqrt %[[X]] : tensor<4xf32>
  %5 = dtc.sqrt %x : tensor<4xf32>
  // CHECK: dtc.rsqrt %[[X]] : tensor<4xf32>
  %6 = dtc.rsqrt %x : tensor<4xf32>
  // CHECK: dtc.reciprocal %[[X]] : tensor<4xf32>
  %7 = dtc.reciprocal %x : tensor<4xf32>
  // CHECK: dtc.tanh %[[X]] : tensor<4xf32>
  %8 = dtc.tanh %x : tensor<4xf32>
  // CHECK: dtc.erf %[[X]] : tensor<4xf32>
  %9 = dtc.erf %x : tensor<4xf32>
  // CHECK: dtc.sin %[[X]] : tensor<4xf32>
  %10 = dtc.sin %x : tensor<4xf32>
  // CHECK: dtc.cos %[[X]] : tensor<4xf32>
  %11 = dtc.cos %x : tensor<4xf32>
  // CHECK: dtc.sigmoid %[[X]] : tensor<4xf32>
  %12 = dtc.sigmoid %x : tensor<4xf32>
  // CHECK: dtc.silu %[[X]] : tensor<4xf32>
  %13 = dtc.silu %x : tensor<4xf32>
  // CHECK: dtc.softplus %[[X]] : tensor<4xf32>
  %14 = dtc.softplus %x : tensor<4xf32>
  // CHECK: dtc.not %[[B]] : tensor<4xi1>
  %15 = dtc.not %b : tensor<4xi1>
  // CHECK: dtc.dropout %[[X]], %{{.*}} ratio = 1.000000e-01 seed = 7 stream = 2 : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  %step = dtc.constant dense<3> : tensor<i64>
  %dr = dtc.dropout %x, %step ratio = 0.1 seed = 7 stream = 2 : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  // CHECK: dtc.dropout %[[X]], %{{.*}} at %{{.*}} in [12] ratio = 1.000000e-01 seed = 7 stream = 2 : (tensor<4xf32>, tensor<i64>, tensor<1xi64>) -> tensor<4xf32>
  %at = dtc.constant dense<[8]> : tensor<1xi64>
  %dp = dtc.dropout %x, %step at %at in [12] ratio = 0.1 seed = 7 stream = 2 : (tensor<4xf32>, tensor<i64>, tensor<1xi64>) -> tensor<4xf32>
  // CHECK: dtc.gelu %[[X]] approximate = none : tensor<4xf32>
  %16 = dtc.gelu %x approximate = none : tensor<4xf32>
  // CHECK: dtc.gelu %[[X]] approximate = tanh : tensor<4xf32>
  %17 = dtc.gelu %x approximate = tanh : tensor<4xf32>
  return
}

// CHECK-LABEL: func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<3xf32>, %[[P:.*]]: tensor<2x1xi1>, %[[Q:.*]]: tensor<3xi1>)
func.func @binary(%a: tensor<2x3xf32>, %v: tensor<3xf32>, %p: tensor<2x1xi1>, %q: tensor<3xi1>) {
  // CHECK: dtc.add %[[A]], %[[V]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = dtc.add %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.sub %[[V]], %[[A]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = dtc.sub %v, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.mul
  %2 = dtc.mul %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.div
  %3 = dtc.div %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.pow
  %4 = dtc.pow %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.mod %{{.*}}, %{{.*}} {truncated} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %md = dtc.mod %a, %v {truncated} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.max
  %5 = dtc.max %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.min
  %6 = dtc.min %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.and %[[P]], %[[Q]] : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %7 = dtc.and %p, %q : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: dtc.or
  %8 = dtc.or %p, %q : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: dtc.xor
  %9 = dtc.xor %p, %q : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: dtc.compare le, %[[A]], %[[V]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %10 = dtc.compare le, %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: dtc.select %[[P]], %[[A]], %[[V]] : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %11 = dtc.select %p, %a, %v : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: dtc.cast %[[A]] : tensor<2x3xf32> to tensor<2x3xbf16>
  %12 = dtc.cast %a : tensor<2x3xf32> to tensor<2x3xbf16>
  return
}

// CHECK-LABEL: func @contractions_and_reductions
func.func @contractions_and_reductions(%x: tensor<8x16x48xf32>, %w: tensor<96x48xf32>,
                                       %g: tensor<48xf32>) {
  // CHECK: dtc.matmul %{{.*}}, %{{.*}} transpose_rhs : (tensor<8x16x48xf32>, tensor<96x48xf32>) -> tensor<8x16x96xf32>
  %0 = dtc.matmul %x, %w transpose_rhs : (tensor<8x16x48xf32>, tensor<96x48xf32>) -> tensor<8x16x96xf32>
  // CHECK: dtc.matmul %{{.*}}, %{{.*}} transpose_lhs : (tensor<48x96xf32>, tensor<48x96xf32>) -> tensor<96x96xf32>
  %t = dtc.transpose %w permutation = [1, 0] : tensor<96x48xf32> -> tensor<48x96xf32>
  %1 = dtc.matmul %t, %t transpose_lhs : (tensor<48x96xf32>, tensor<48x96xf32>) -> tensor<96x96xf32>
  // CHECK: dtc.reduce_sum %{{.*}} dims = [0, 2] keep_dims : tensor<8x16x48xf32> -> tensor<1x16x1xf32>
  %2 = dtc.reduce_sum %x dims = [0, 2] keep_dims : tensor<8x16x48xf32> -> tensor<1x16x1xf32>
  // CHECK: dtc.reduce_mean %{{.*}} dims = [2] : tensor<8x16x48xf32> -> tensor<8x16xf32>
  %3 = dtc.reduce_mean %x dims = [2] : tensor<8x16x48xf32> -> tensor<8x16xf32>
  // CHECK: dtc.reduce_max %{{.*}} dims = [] : tensor<8x16x48xf32> -> tensor<8x16x48xf32>
  %4 = dtc.reduce_max %x dims = [] : tensor<8x16x48xf32> -> tensor<8x16x48xf32>
  // CHECK: dtc.reduce_min %{{.*}} dims = [0, 1, 2] : tensor<8x16x48xf32> -> tensor<f32>
  %5 = dtc.reduce_min %x dims = [0, 1, 2] : tensor<8x16x48xf32> -> tensor<f32>
  // CHECK: dtc.arg_max %{{.*}} dim = 2 : tensor<8x16x48xf32> -> tensor<8x16xi64>
  %am = dtc.arg_max %x dim = 2 : tensor<8x16x48xf32> -> tensor<8x16xi64>
  // CHECK: dtc.arg_max %{{.*}} dim = 0 keep_dims select_last_index : tensor<8x16x48xf32> -> tensor<1x16x48xi64>
  %am2 = dtc.arg_max %x dim = 0 keep_dims select_last_index : tensor<8x16x48xf32> -> tensor<1x16x48xi64>
  // CHECK: dtc.cumsum %{{.*}} dim = 1 exclusive reverse : tensor<8x16x48xf32>
  %cs = dtc.cumsum %x dim = 1 exclusive reverse : tensor<8x16x48xf32>
  // CHECK: dtc.softmax %{{.*}} dim = 2 : tensor<8x16x48xf32>
  %6 = dtc.softmax %x dim = 2 : tensor<8x16x48xf32>
  // CHECK: dtc.log_softmax %{{.*}} dim = 0 : tensor<8x16x48xf32>
  %7 = dtc.log_softmax %x dim = 0 : tensor<8x16x48xf32>
  // CHECK: dtc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} dim = 2 epsilon = 1.000000e-05 : (tensor<8x16x48xf32>, tensor<48xf32>, tensor<48xf32>) -> (tensor<8x16x48xf32>, tensor<8x16x1xf32>, tensor<8x16x1xf32>)
  %8:3 = dtc.layer_norm %x, %g, %g dim = 2 epsilon = 1.0e-05 : (tensor<8x16x48xf32>, tensor<48xf32>, tensor<48xf32>) -> (tensor<8x16x48xf32>, tensor<8x16x1xf32>, tensor<8x16x1xf32>)
  // CHECK: dtc.layer_norm %{{.*}}, %{{.*}} dim = 2 epsilon = 1.000000e-05 : (tensor<8x16x48xf32>, tensor<48xf32>) -> (tensor<8x16x48xf32>, tensor<8x16x1xf32>, tensor<8x16x1xf32>)
  %9:3 = dtc.layer_norm %x, %g dim = 2 epsilon = 1.0e-05 : (tensor<8x16x48xf32>, tensor<48xf32>) -> (tensor<8x16x48xf32>, tensor<8x16x1xf32>, tensor<8x16x1xf32>)
  // CHECK: dtc.rms_norm %{{.*}}, %{{.*}} dim = 2 epsilon = 9.9999999999999995E-7 : (tensor<8x16x48xf32>, tensor<48xf32>) -> tensor<8x16x48xf32>
  %10 = dtc.rms_norm %x, %g dim = 2 epsilon = 1.0e-06 : (tensor<8x16x48xf32>, tensor<48xf32>) -> tensor<8x16x48xf32>
  %angles = dtc.slice %x starts = [0, 0, 0] sizes = [8, 16, 8] strides = [1, 1, 1] : tensor<8x16x48xf32> -> tensor<8x16x8xf32>
  // CHECK: dtc.rotary %{{.*}}, %{{.*}}, %{{.*}} rotary_dim = 16 interleaved : (tensor<8x16x48xf32>, tensor<8x16x8xf32>, tensor<8x16x8xf32>) -> tensor<8x16x48xf32>
  %11 = dtc.rotary %x, %angles, %angles rotary_dim = 16 interleaved : (tensor<8x16x48xf32>, tensor<8x16x8xf32>, tensor<8x16x8xf32>) -> tensor<8x16x48xf32>
  return
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%wte: tensor<96x48xf32>, %ids: tensor<8x16xi64>, %x: tensor<4x8xf32>,
                         %b: tensor<48xf32>) {
  // CHECK: dtc.gather %{{.*}}[%{{.*}}] dim = 0 : (tensor<96x48xf32>, tensor<8x16xi64>) -> tensor<8x16x48xf32>
  %0 = dtc.gather %wte[%ids] dim = 0 : (tensor<96x48xf32>, tensor<8x16xi64>) -> tensor<8x16x48xf32>
  // CHECK: dtc.reshape %{{.*}} : tensor<8x16x48xf32> to tensor<128x48xf32>
  %1 = dtc.reshape %0 : tensor<8x16x48xf32> to tensor<128x48xf32>
  // CHECK: dtc.transpose %{{.*}} permutation = [0, 2, 1] : tensor<8x16x48xf32> -> tensor<8x48x16xf32>
  %2 = dtc.transpose %0 permutation = [0, 2, 1] : tensor<8x16x48xf32> -> tensor<8x48x16xf32>
  // CHECK: dtc.broadcast %{{.*}} : tensor<48xf32> to tensor<8x16x48xf32>
  %3 = dtc.broadcast %b : tensor<48xf32> to tensor<8x16x48xf32>
  // CHECK: dtc.concat %{{.*}}, %{{.*}} dim = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %4 = dtc.concat %x, %x dim = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // CHECK: dtc.slice %{{.*}} starts = [3, 7] sizes = [2, 4] strides = [-1, -2] : tensor<4x8xf32> -> tensor<2x4xf32>
  %5 = dtc.slice %x starts = [3, 7] sizes = [2, 4] strides = [-1, -2] : tensor<4x8xf32> -> tensor<2x4xf32>
  // CHECK: dtc.split %{{.*}} dim = 1 sizes = [2, 6] : tensor<4x8xf32> -> tensor<4x2xf32>, tensor<4x6xf32>
  %6:2 = dtc.split %x dim = 1 sizes = [2, 6] : tensor<4x8xf32> -> tensor<4x2xf32>, tensor<4x6xf32>
  // CHECK: dtc.scatter_add %{{.*}} into %{{.*}}[%{{.*}}] dim = 0 : (tensor<96x48xf32>, tensor<8x16xi64>, tensor<8x16x48xf32>) -> tensor<96x48xf32>
  %7 = dtc.scatter_add %0 into %wte[%ids] dim = 0 : (tensor<96x48xf32>, tensor<8x16xi64>, tensor<8x16x48xf32>) -> tensor<96x48xf32>
  // CHECK: dtc.scatter_reduce %{{.*}} into %{{.*}}[%{{.*}}] dim = 0 kind = mul : (tensor<96x48xf32>, tensor<8x16xi64>, tensor<8x16x48xf32>) -> tensor<96x48xf32>
  %sr = dtc.scatter_reduce %0 into %wte[%ids] dim = 0 kind = mul : (tensor<96x48xf32>, tensor<8x16xi64>, tensor<8x16x48xf32>) -> tensor<96x48xf32>
  // CHECK: dtc.gather_elements %{{.*}}[%{{.*}}] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  %ix = dtc.constant dense<0> : tensor<4x2xi64>
  %ge = dtc.gather_elements %x[%ix] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  // CHECK: dtc.scatter_elements_add %{{.*}} into %{{.*}}[%{{.*}}] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x8xf32>
  %se = dtc.scatter_elements_add %ge into %x[%ix] dim = 1 : (tensor<4x8xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x8xf32>
  // CHECK: dtc.top_k %{{.*}} k = 3 dim = 1 smallest : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x3xi64>)
  %tv, %ti = dtc.top_k %x k = 3 dim = 1 smallest : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x3xi64>)
  // CHECK: dtc.update_slice %{{.*}} into %{{.*}} starts = [3, 7] strides = [-1, -2] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = dtc.update_slice %5 into %x starts = [3, 7] strides = [-1, -2] : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<2x8x16x4xf32>, %k: tensor<2x2x16x4xf32>, %v: tensor<2x2x16x6xf32>, %m: tensor<16x16xi1>, %s: tensor<i64>, %o: tensor<4xi64>) {
  // CHECK: dtc.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 5.000000e-01 : (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x6xf32>) -> (tensor<2x8x16x6xf32>, tensor<2x8x16x16xf32>)
  %0:2 = dtc.attention %q, %k, %v scale = 0.5 : (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x6xf32>) -> (tensor<2x8x16x6xf32>, tensor<2x8x16x16xf32>)
  // CHECK: dtc.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} dropout step %{{.*}} at %{{.*}} scale = 5.000000e-01 {dropout_ratio = 1.000000e-01 : f64, global_shape = array<i64: 4, 8, 16, 16>, seed = 1 : i64, stream = 2 : i64} : (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x6xf32>, tensor<16x16xi1>, tensor<i64>, tensor<4xi64>) -> (tensor<2x8x16x6xf32>, tensor<2x8x16x16xf32>)
  %1:2 = dtc.attention %q, %k, %v mask %m dropout step %s at %o scale = 0.5 {dropout_ratio = 0.1 : f64, seed = 1 : i64, stream = 2 : i64, global_shape = array<i64: 4, 8, 16, 16>} : (tensor<2x8x16x4xf32>, tensor<2x2x16x4xf32>, tensor<2x2x16x6xf32>, tensor<16x16xi1>, tensor<i64>, tensor<4xi64>) -> (tensor<2x8x16x6xf32>, tensor<2x8x16x16xf32>)
  return
}

// CHECK-LABEL: func @fusion
func.func @fusion(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  // CHECK: dtc.fusion loop(%{{.*}}, %{{.*}}) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
  // CHECK: dtc.yield %{{.*}} : tensor<8x16xf32>
  %y = dtc.fusion loop(%x, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<8x16xf32>, %c: tensor<16xf32>):
    %s = dtc.add %a, %c : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    %r = dtc.relu %s : tensor<8x16xf32>
    dtc.yield %r : tensor<8x16xf32>
  }
  return %y : tensor<8x16xf32>
}

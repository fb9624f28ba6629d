// dtc-expand-attention writes f32 attention as matmuls around a softmax:
// grouped-query heads as blocks of rows of their key/value head (no
// repeated heads), the scale, softcap, masks (selected or added) and the
// dropout the backward draws. The reference executor runs the function
// before and after: the results and probabilities agree. bf16 stays.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python -c "import numpy as np; r = np.random.default_rng(3); [np.save('%t/in/' + n + '.npy', r.normal(size=s).astype(np.float32)) for n, s in [('q', (2, 4, 5, 8)), ('k', (2, 2, 5, 8)), ('v', (2, 2, 5, 8)), ('k4', (2, 4, 6, 8)), ('v4', (2, 4, 6, 8)), ('m', (2, 1, 5, 6))]]"
// RUN: dtc-run %s --function f --inputs %t/in --outputs %t/op
// RUN: dtc-opt %s --dtc-expand-attention -o %t/expanded.mlir
// RUN: FileCheck %s < %t/expanded.mlir
// RUN: dtc-run %t/expanded.mlir --function f --inputs %t/in --outputs %t/expanded
// RUN: %python %S/../../Utils/compare_npy.py %t/expanded/y.npy %t/op/y.npy --rtol 1e-5 --atol 1e-6 --rel-l2 1e-6
// RUN: %python %S/../../Utils/compare_npy.py %t/expanded/p.npy %t/op/p.npy --rtol 1e-5 --atol 1e-6 --rel-l2 1e-6
// RUN: %python %S/../../Utils/compare_npy.py %t/expanded/y2.npy %t/op/y2.npy --rtol 1e-5 --atol 1e-6 --rel-l2 1e-6

// CHECK-LABEL: func.func @f
// CHECK-NOT: dtc.attention
// Four query heads over two key/value heads: [2, 2, 2 * 5, 8] rows.
// CHECK: %[[QG:.*]] = dtc.reshape %arg0 : tensor<2x4x5x8xf32> to tensor<2x2x10x8xf32>
// CHECK: %[[S:.*]] = dtc.matmul %[[QG]], %arg1 transpose_rhs : {{.*}} -> tensor<2x2x10x5xf32>
// CHECK: %[[SH:.*]] = dtc.reshape %[[S]] : tensor<2x2x10x5xf32> to tensor<2x4x5x5xf32>
// CHECK: %[[SC:.*]] = dtc.mul %[[SH]]
// CHECK: %[[NEGINF:.*]] = dtc.constant dense<0xFF800000>
// CHECK: %[[MS:.*]] = dtc.select %{{.*}}, %[[SC]], %[[NEGINF]]
// CHECK: %[[P:.*]] = dtc.softmax %[[MS]] dim = 3
// CHECK: %[[PG:.*]] = dtc.reshape %[[P]] : tensor<2x4x5x5xf32> to tensor<2x2x10x5xf32>
// CHECK: %[[Y:.*]] = dtc.matmul %[[PG]], %arg2 :
// CHECK: dtc.reshape %[[Y]] : tensor<2x2x10x8xf32> to tensor<2x4x5x8xf32>
// The second: softcap, an added float mask, dropout before the product.
// CHECK: dtc.tanh
// CHECK: %[[MASKED:.*]] = dtc.add %{{.*}}, %arg5
// CHECK: %[[P2:.*]] = dtc.softmax %[[MASKED]] dim = 3
// CHECK: %[[D:.*]] = dtc.dropout %[[P2]], %{{.*}} ratio = 2.000000e-01 seed = 3 stream = 5
// CHECK: dtc.matmul %[[D]], %arg4 :
// CHECK-LABEL: func.func @bf16_stays
// CHECK: dtc.attention
func.func @f(%q: tensor<2x4x5x8xf32> {dtc.input = "q"},
             %k: tensor<2x2x5x8xf32> {dtc.input = "k"},
             %v: tensor<2x2x5x8xf32> {dtc.input = "v"},
             %k4: tensor<2x4x6x8xf32> {dtc.input = "k4"},
             %v4: tensor<2x4x6x8xf32> {dtc.input = "v4"},
             %m: tensor<2x1x5x6xf32> {dtc.input = "m"})
    -> (tensor<2x4x5x8xf32> {dtc.output = "y"},
        tensor<2x4x5x5xf32> {dtc.output = "p"},
        tensor<2x4x5x8xf32> {dtc.output = "y2"}) {
  %causal = dtc.constant dense<[[true, false, false, false, false], [true, true, false, false, false], [true, true, true, false, false], [true, true, true, true, false], [true, true, true, true, true]]> : tensor<5x5xi1>
  %y, %p = dtc.attention %q, %k, %v mask %causal scale = 0.35
      : (tensor<2x4x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<5x5xi1>)
      -> (tensor<2x4x5x8xf32>, tensor<2x4x5x5xf32>)
  %step = dtc.constant dense<4> : tensor<i64>
  %y2, %p2 = dtc.attention %q, %k4, %v4 mask %m dropout step %step scale = 0.35
      {dropout_ratio = 0.2 : f64, seed = 3 : i64, stream = 5 : i64, softcap = 5.0 : f64}
      : (tensor<2x4x5x8xf32>, tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>, tensor<2x1x5x6xf32>, tensor<i64>)
      -> (tensor<2x4x5x8xf32>, tensor<2x4x5x6xf32>)
  return %y, %p, %y2 : tensor<2x4x5x8xf32>, tensor<2x4x5x5xf32>, tensor<2x4x5x8xf32>
}

func.func @bf16_stays(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16> {
  %y, %p = dtc.attention %q, %k, %v scale = 0.35 : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4x4xbf16>)
  return %y : tensor<1x2x4x8xbf16>
}

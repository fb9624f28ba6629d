// dtc.attention_grad's reference kernel (f64 loops over the rows) equals
// the ops dtc-expand-attention-grad writes for it -- the VJP the training
// tests check against PyTorch -- with grouped-query heads, an i1 mask that
// masks whole rows, dropout and a softcap.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python -c "import numpy as np; r = np.random.default_rng(7); [np.save('%t/in/' + n + '.npy', r.normal(size=s).astype(np.float32)) for n, s in [('q', (2, 4, 3, 4)), ('k', (2, 2, 5, 4)), ('v', (2, 2, 5, 3)), ('dout', (2, 4, 3, 3))]]"
// RUN: dtc-run %s --inputs %t/in --outputs %t/kernel
// RUN: dtc-opt %s -dtc-expand-attention-grad -o %t/expanded.mlir
// RUN: FileCheck %s --check-prefix=EXPANDED < %t/expanded.mlir
// EXPANDED-NOT: dtc.attention_grad
// EXPANDED: dtc.matmul
// RUN: dtc-run %t/expanded.mlir --inputs %t/in --outputs %t/ops
// RUN: %python %S/../Utils/compare_npy.py %t/kernel/dq.npy %t/ops/dq.npy --rtol 1e-5 --atol 1e-6 --rel-l2 1e-6
// RUN: %python %S/../Utils/compare_npy.py %t/kernel/dk.npy %t/ops/dk.npy --rtol 1e-5 --atol 1e-6 --rel-l2 1e-6
// RUN: %python %S/../Utils/compare_npy.py %t/kernel/dv.npy %t/ops/dv.npy --rtol 1e-5 --atol 1e-6 --rel-l2 1e-6

func.func @f(%q: tensor<2x4x3x4xf32> {dtc.input = "q"},
             %k: tensor<2x2x5x4xf32> {dtc.input = "k"},
             %v: tensor<2x2x5x3xf32> {dtc.input = "v"},
             %dout: tensor<2x4x3x3xf32> {dtc.input = "dout"})
    -> (tensor<2x4x3x4xf32> {dtc.output = "dq"},
        tensor<2x2x5x4xf32> {dtc.output = "dk"},
        tensor<2x2x5x3xf32> {dtc.output = "dv"}) {
  %step = dtc.constant dense<3> : tensor<i64>
  // Query 2 sees no key: its scores are all the masked value.
  %mask = dtc.constant dense<[[true, true, false, true, false],
                              [true, false, false, false, false],
                              [false, false, false, false, false]]> : tensor<3x5xi1>
  %o, %p = dtc.attention %q, %k, %v mask %mask dropout step %step scale = 0.5
      {dropout_ratio = 0.25 : f64, seed = 4 : i64, stream = 1 : i64,
       softcap = 2.0 : f64, masked_value = -1.0e4 : f64}
      : (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>,
         tensor<3x5xi1>, tensor<i64>) -> (tensor<2x4x3x3xf32>, tensor<2x4x3x5xf32>)
  %dq, %dk, %dv = dtc.attention_grad %q, %k, %v, %p, %dout mask %mask
      dropout step %step scale = 0.5
      {dropout_ratio = 0.25 : f64, seed = 4 : i64, stream = 1 : i64,
       softcap = 2.0 : f64, masked_value = -1.0e4 : f64}
      : (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>,
         tensor<2x4x3x5xf32>, tensor<2x4x3x3xf32>, tensor<3x5xi1>, tensor<i64>)
      -> (tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>)
  return %dq, %dk, %dv : tensor<2x4x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>
}

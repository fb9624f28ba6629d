// dtc.attention's dropout draws what dtc.dropout draws on the
// [batch, heads, queries, keys] probabilities (same seed, stream, step and
// global indices), whole and as a part placed at an offset in a larger
// tensor: the fused op equals the decomposed computation.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python -c "import numpy as np; r = np.random.default_rng(5); [np.save('%t/in/' + n + '.npy', r.normal(size=s).astype(np.float32)) for n, s in [('q', (2, 2, 3, 4)), ('k', (2, 2, 5, 4)), ('v', (2, 2, 5, 3))]]"
// RUN: dtc-run %s --inputs %t/in --outputs %t/out
// RUN: %python %S/../Utils/compare_npy.py %t/out/fused.npy %t/out/decomposed.npy --rtol 1e-6 --atol 1e-6 --rel-l2 1e-6
// RUN: %python %S/../Utils/compare_npy.py %t/out/fused_part.npy %t/out/decomposed_part.npy --rtol 1e-6 --atol 1e-6 --rel-l2 1e-6

func.func @f(%q: tensor<2x2x3x4xf32> {dtc.input = "q"},
             %k: tensor<2x2x5x4xf32> {dtc.input = "k"},
             %v: tensor<2x2x5x3xf32> {dtc.input = "v"})
    -> (tensor<2x2x3x3xf32> {dtc.output = "fused"},
        tensor<2x2x3x3xf32> {dtc.output = "decomposed"},
        tensor<2x2x3x3xf32> {dtc.output = "fused_part"},
        tensor<2x2x3x3xf32> {dtc.output = "decomposed_part"}) {
  %step = dtc.constant dense<4> : tensor<i64>
  %fused, %fused_p = dtc.attention %q, %k, %v dropout step %step scale = 0.5
      {dropout_ratio = 0.3 : f64, seed = 9 : i64, stream = 2 : i64}
      : (tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>,
         tensor<i64>) -> (tensor<2x2x3x3xf32>, tensor<2x2x3x5xf32>)
  %s = dtc.matmul %q, %k transpose_rhs
      : (tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x3x5xf32>
  %half = dtc.constant dense<0.5> : tensor<f32>
  %scaled = dtc.mul %s, %half
      : (tensor<2x2x3x5xf32>, tensor<f32>) -> tensor<2x2x3x5xf32>
  %p = dtc.softmax %scaled dim = 3 : tensor<2x2x3x5xf32>
  %pd = dtc.dropout %p, %step ratio = 0.3 seed = 9 stream = 2
      : (tensor<2x2x3x5xf32>, tensor<i64>) -> tensor<2x2x3x5xf32>
  %decomposed = dtc.matmul %pd, %v
      : (tensor<2x2x3x5xf32>, tensor<2x2x5x3xf32>) -> tensor<2x2x3x3xf32>
  // The same as the second and third heads of a [2, 4, 3, 5] tensor.
  %offset = dtc.constant dense<[0, 1, 0, 0]> : tensor<4xi64>
  %fused_part, %fused_part_p = dtc.attention %q, %k, %v dropout step %step at %offset
      scale = 0.5 {dropout_ratio = 0.3 : f64, seed = 9 : i64, stream = 2 : i64,
                   global_shape = array<i64: 2, 4, 3, 5>}
      : (tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x3xf32>,
         tensor<i64>, tensor<4xi64>) -> (tensor<2x2x3x3xf32>, tensor<2x2x3x5xf32>)
  %pd_part = dtc.dropout %p, %step at %offset in [2, 4, 3, 5] ratio = 0.3
      seed = 9 stream = 2
      : (tensor<2x2x3x5xf32>, tensor<i64>, tensor<4xi64>) -> tensor<2x2x3x5xf32>
  %decomposed_part = dtc.matmul %pd_part, %v
      : (tensor<2x2x3x5xf32>, tensor<2x2x5x3xf32>) -> tensor<2x2x3x3xf32>
  return %fused, %decomposed, %fused_part, %decomposed_part
      : tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>,
        tensor<2x2x3x3xf32>
}

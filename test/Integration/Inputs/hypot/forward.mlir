// A small language model with dtc_test.hypot (test/lib) in the two places
// the parallel layouts cut differently: on the column-parallel projection's
// features (tensor parallelism splits them) and on the residual stream
// after the norm (sequence parallelism splits its tokens). Parameters come
// from --init (check_hypot.py make).
func.func @train_step(%ids: tensor<4x8xi64> {dtc.input = "ids"},
                   %wte: tensor<16x8xf32> {dtc.param = "wte"},
                   %w1: tensor<16x8xf32> {dtc.param = "w1"},
                   %c1: tensor<16xf32> {dtc.param = "c1"},
                   %w2: tensor<8x16xf32> {dtc.param = "w2"},
                   %g: tensor<8xf32> {dtc.param = "norm"},
                   %c2: tensor<8xf32> {dtc.param = "c2"},
                   %head: tensor<16x8xf32> {dtc.param = "head"})
    -> (tensor<4x8x16xf32> {dtc.output = "logits"}) {
  %x = dtc.gather %wte[%ids] dim = 0
      : (tensor<16x8xf32>, tensor<4x8xi64>) -> tensor<4x8x8xf32>
  %h = dtc.matmul %x, %w1 transpose_rhs
      : (tensor<4x8x8xf32>, tensor<16x8xf32>) -> tensor<4x8x16xf32>
  %a = dtc_test.hypot %h, %c1
      : (tensor<4x8x16xf32>, tensor<16xf32>) -> tensor<4x8x16xf32>
  %y = dtc.matmul %a, %w2 transpose_rhs
      : (tensor<4x8x16xf32>, tensor<8x16xf32>) -> tensor<4x8x8xf32>
  %r = dtc.add %x, %y
      : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %n = dtc.rms_norm %r, %g dim = 2 epsilon = 1.0e-06
      : (tensor<4x8x8xf32>, tensor<8xf32>) -> tensor<4x8x8xf32>
  %m = dtc_test.hypot %n, %c2
      : (tensor<4x8x8xf32>, tensor<8xf32>) -> tensor<4x8x8xf32>
  %logits = dtc.matmul %m, %head transpose_rhs
      : (tensor<4x8x8xf32>, tensor<16x8xf32>) -> tensor<4x8x16xf32>
  return %logits : tensor<4x8x16xf32>
}

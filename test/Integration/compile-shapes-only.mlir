// dtc-compile --shapes-only compiles without the weights (the scaling
// models name external data that does not exist) and still reports what a
// rank needs: 8 layers of the Llama shape, all initializers trained.
// Per layer 2 norms of 32, wq and wo 32x32, wk and wv 16x32, w1 and w3
// 64x32, w2 32x64: 9280 floats; plus the 64x32 embedding, the final norm
// and the 8x8 RoPE cos, sin and mask tables: 4 * (8 * 9280 + 2048 + 32 +
// 3 * 64) = 306048 bytes, as many of gradients, twice that plus the step
// of AdamW state; the all-reduce moves the gradients and two loss scalars.
// RUN: rm -rf %t && dtc-compile --shapes-only %S/../Import/ONNX/Inputs/scaling/llama_8.onnx -o %t --bucket-mb 0 --mesh dp=2 2>&1 | FileCheck %s
// CHECK: dtc-compile: per rank: parameters 306048 B, gradients 306048 B, optimizer state 612104 B
// CHECK: dtc-compile: per rank per step: all_reduce {{[0-9]+}} calls, 306056 bus bytes
// CHECK: dtc-compile: wrote
// Without it, the missing data is an error naming the file:
// RUN: not dtc-compile %S/../Import/ONNX/Inputs/scaling/llama_8.onnx -o %t/full 2>&1 | FileCheck %s --check-prefix=DATA
// DATA: error: {{.*}}llama_8.weights

// A 32-layer Llama-shaped model whose weights are external data that does
// not exist (Inputs/scaling, bench/make_scaling_models.py) imports from
// shapes alone; without --shapes-only the missing file is a clean error.
// RUN: dtc-translate --import-onnx --shapes-only %S/Inputs/scaling/llama_32.onnx | FileCheck %s
// CHECK: func.func @forward(%{{.*}}: tensor<2x8xi64> {dtc.input = "ids"}
// CHECK-SAME: tensor<8x8xf32> {dtc.param = "rope_cos", dtc.unit = "rope_cos"}
// CHECK-SAME: tensor<32xf32> {dtc.param = "layers.31.mlp_norm.weight", dtc.unit = "layers.31"}
// CHECK-NOT: dtc.value
// CHECK: return %{{.*}} : tensor<2x8x64xf32>
// RUN: dtc-translate --import-onnx --shapes-only --freeze '^rope_' %S/Inputs/scaling/llama_8.onnx | FileCheck %s --check-prefix=FROZEN
// FROZEN: {dtc.param = "rope_cos", dtc.trainable = false, dtc.unit = "rope_cos"}
// RUN: not dtc-translate --import-onnx %S/Inputs/scaling/llama_8.onnx 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: initializer: tensor 'rope_cos': cannot open external data file '{{.*}}llama_8.weights'

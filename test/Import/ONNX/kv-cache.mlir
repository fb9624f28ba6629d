// Attention's KV cache: for inference the cached keys and values come
// before this step's (causal positions shifted by the cache's length) and
// are the present outputs; a training compile refuses the cache by name.

// RUN: dtc-translate --import-onnx %S/Inputs/kv_cache_attention.onnx | FileCheck %s
// CHECK: func.func @forward
// CHECK-SAME: %[[PK:arg3]]: tensor<1x2x5x4xf32> {dtc.input = "past_key"}
// CHECK-SAME: -> (tensor<1x2x3x4xf32> {dtc.output = "y"}, tensor<1x2x8x4xf32> {dtc.output = "present_key"}, tensor<1x2x8x4xf32> {dtc.output = "present_value"})
// CHECK: %[[K:.*]] = dtc.concat %[[PK]], %arg1 dim = 2
// CHECK: %[[V:.*]] = dtc.concat %arg4, %arg2 dim = 2
// The query i sits at key i + 5: the causal frontier is col - row - 5 <= 0.
// CHECK: %[[PAST:.*]] = dtc.constant dense<5> : tensor<i64>
// CHECK: dtc.attention %arg0, %[[K]], %[[V]] mask
// CHECK: return %{{.*}}, %[[K]], %[[V]]

// RUN: not dtc-compile %S/Inputs/kv_cache_attention.onnx -o %t 2>&1 | FileCheck %s --check-prefix=TRAIN
// TRAIN: error: Attention node '': past_key/past_value (a KV cache) are inference state, not trained: export the model without a cache (use_cache=False)

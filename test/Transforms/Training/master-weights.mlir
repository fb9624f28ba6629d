// RUN: dtc-opt %s --dtc-master-weights | FileCheck %s
// RUN: dtc-opt %s --dtc-master-weights --dtc-optimizer="optimizer=adamw lr=0.1 weight-decay=0.01" | FileCheck %s --check-prefix=OPT

// A step as dtc-mixed-precision and dtc-autodiff leave it: the weight is
// cast to bf16 where a matmul reads it and read as f32 by the norm.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xbf16> {dtc.input = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xbf16> {dtc.param = "w"}
// CHECK-SAME: %[[F:[a-z0-9]+]]: tensor<4xf32> {dtc.param = "frozen", dtc.trainable = false}
// CHECK-SAME: -> (tensor<f32>, tensor<4xbf16> {dtc.grad = "w"}) attributes {dtc.step = #dtc.step<abi = 1, loss = 0>}
// The bf16 reader reads the parameter itself; the f32 one its widening.
// CHECK: %[[P:.*]] = dtc.mul %[[X]], %[[W]] : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
// CHECK: %[[WF:.*]] = dtc.cast %[[W]] : tensor<4xbf16> to tensor<4xf32>
// CHECK: dtc.add %[[WF]], %[[F]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// The gradient, summed in f32, is returned in bf16.
// CHECK: %[[GB:.*]] = dtc.cast %{{.*}} : tensor<4xf32> to tensor<4xbf16>
// CHECK: return %{{.*}}, %[[GB]] : tensor<f32>, tensor<4xbf16>

// The optimizer updates an f32 master copy and writes back its rounding;
// its moments are f32. The frozen parameter is left alone.
// OPT-LABEL: func.func @step(
// OPT-SAME: %[[W:[a-z0-9]+]]: tensor<4xbf16> {dtc.aliasing_output = 2 : i64, dtc.param = "w"}
// OPT-SAME: %{{.*}}: tensor<4xf32> {dtc.param = "frozen", dtc.trainable = false}
// OPT-SAME: %[[M:[a-z0-9]+]]: tensor<4xf32> {dtc.aliasing_output = 3 : i64, dtc.state = #dtc.state<master of "w">}
// OPT-SAME: tensor<4xf32> {dtc.aliasing_output = 4 : i64, dtc.state = #dtc.state<exp_avg of "w">}
// OPT-SAME: tensor<4xf32> {dtc.aliasing_output = 5 : i64, dtc.state = #dtc.state<exp_avg_sq of "w">}
// OPT-SAME: -> (tensor<f32>, tensor<4xbf16> {dtc.grad = "w"}, tensor<4xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32> {dtc.output = "learning_rate"})
// OPT: dtc.cast %{{.*}} : tensor<4xbf16> to tensor<4xf32>
// OPT: %[[DECAYED:.*]] = dtc.mul %[[M]], %{{.*}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// OPT: %[[NEW:.*]] = dtc.sub %[[DECAYED]], %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// OPT: %[[ROUNDED:.*]] = dtc.cast %[[NEW]] : tensor<4xf32> to tensor<4xbf16>
// OPT: return {{.*}}, %[[ROUNDED]], %[[NEW]],
func.func @step(%x: tensor<2x4xbf16> {dtc.input = "x"}, %w: tensor<4xf32> {dtc.param = "w"},
                %frozen: tensor<4xf32> {dtc.param = "frozen", dtc.trainable = false})
    -> (tensor<f32>, tensor<4xf32> {dtc.grad = "w"}) attributes {dtc.step = #dtc.step<abi = 1, loss = 0>} {
  %wb = dtc.cast %w : tensor<4xf32> to tensor<4xbf16>
  %p = dtc.mul %x, %wb : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
  %s = dtc.add %w, %frozen : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %pf = dtc.cast %p : tensor<2x4xbf16> to tensor<2x4xf32>
  %t = dtc.mul %pf, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %loss = dtc.reduce_sum %t dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %g = dtc.reduce_sum %pf dims = [0] : tensor<2x4xf32> -> tensor<4xf32>
  return %loss, %g : tensor<f32>, tensor<4xf32>
}

// RUN: not dtc-opt %s --dtc-master-weights="type=f16" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: dtc-master-weights: parameters are stored in bf16 only

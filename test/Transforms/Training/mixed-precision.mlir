// RUN: dtc-opt %s --dtc-mixed-precision | FileCheck %s

// CHECK-LABEL: func.func @block(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xf32> {dtc.input = "x"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x4xf32> {dtc.param = "w"}
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {dtc.param = "g"}
// Each use of the tied weight gets its own cast.
// CHECK: %[[XB:.*]] = dtc.cast %[[X]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[W1:.*]] = dtc.cast %[[W]] : tensor<4x4xf32> to tensor<4x4xbf16>
// CHECK: %[[H:.*]] = dtc.matmul %[[XB]], %[[W1]] : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// Normalizations compute in f32, on the f32 master weights.
// CHECK: %[[HF:.*]] = dtc.cast %[[H]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: %[[N:.*]], %{{.*}}, %{{.*}} = dtc.layer_norm %[[HF]], %[[G]] dim = 1 {{.*}} -> (tensor<2x4xf32>
// CHECK: %[[NB:.*]] = dtc.cast %[[N]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[W2:.*]] = dtc.cast %[[W]] : tensor<4x4xf32> to tensor<4x4xbf16>
// CHECK: %[[Y:.*]] = dtc.matmul %[[NB]], %[[W2]]
// The results go back to f32.
// CHECK: %[[YF:.*]] = dtc.cast %[[Y]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: return %[[YF]] : tensor<2x4xf32>
func.func @block(%x: tensor<2x4xf32> {dtc.input = "x"}, %w: tensor<4x4xf32> {dtc.param = "w"},
                 %g: tensor<4xf32> {dtc.param = "g"}) -> (tensor<2x4xf32> {dtc.output = "logits"}) {
  %h = dtc.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %n, %m, %r = dtc.layer_norm %h, %g dim = 1 epsilon = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  %y = dtc.matmul %n, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// RUN: dtc-opt %s --dtc-mixed-precision="type=f16 init-scale=1024 growth-interval=10" | FileCheck %s --check-prefix=F16
// F16-LABEL: func.func @block(
// F16-SAME: %{{.*}}: tensor<f32> {dtc.state = #dtc.state<loss_scale>, dtc.value = dense<1.024000e+03> : tensor<f32>}
// F16-SAME: %{{.*}}: tensor<i64> {dtc.state = #dtc.state<growth_tracker>}
// F16-SAME: attributes {dtc.step = #dtc.step<abi = 1, loss_scaling = <growth_interval = 10>>}
// F16: dtc.matmul {{.*}} -> tensor<2x4xf16>
// RUN: not dtc-opt %s --dtc-mixed-precision="type=f8" 2>&1 | FileCheck %s --check-prefix=BADTYPE
// BADTYPE: for the --type option: Cannot find option named 'f8'!

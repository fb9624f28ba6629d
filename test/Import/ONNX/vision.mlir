// The vision ops as dtc ops (Inputs/vision/make_fixtures.py; docs/Vision.md).
// RUN: dtc-translate --import-onnx %S/Inputs/vision/forms.onnx | FileCheck %s

// A training-mode batch norm's running statistics are buffers: frozen
// parameters donated to the next values the function returns.
// CHECK: %arg6: tensor<4xf32> {dtc.aliasing_output = 2 : i64, dtc.param = "bn.running_mean", dtc.trainable = false
// CHECK-SAME: %arg7: tensor<4xf32> {dtc.aliasing_output = 3 : i64, dtc.param = "bn.running_var", dtc.trainable = false

// A 3x3 convolution with pads 1: the zero-padded input, one strided slice
// per kernel offset, the columns [N, C * 9, P] and one GEMM with the
// weights [O, C * 9], then the bias per channel.
// CHECK: %[[PADDED:.*]] = dtc.concat {{.*}} dim = 3 : {{.*}} -> tensor<2x3x6x6xf32>
// CHECK: dtc.slice %[[PADDED]] starts = [0, 0, 0, 0] sizes = [2, 3, 4, 4] strides = [1, 1, 1, 1]
// CHECK-COUNT-8: dtc.slice %[[PADDED]]
// CHECK: %[[COLS:.*]] = dtc.reshape {{.*}} : tensor<2x3x9x16xf32> to tensor<2x27x16xf32>
// CHECK: %[[W:.*]] = dtc.reshape %arg1 : tensor<4x3x3x3xf32> to tensor<4x27xf32>
// CHECK: dtc.matmul %[[W]], %[[COLS]] : (tensor<4x27xf32>, tensor<2x27x16xf32>) -> tensor<2x4x16xf32>
// CHECK: dtc.add {{.*}} : (tensor<2x4x4x4xf32>, tensor<4x1x1xf32>) -> tensor<2x4x4x4xf32>

// A patch convolution (stride = kernel): the input's blocks transposed, no
// slices.
// CHECK-NOT: dtc.slice
// CHECK: %[[BLOCKS:.*]] = dtc.reshape %arg0 : tensor<2x3x4x4xf32> to tensor<2x3x2x2x2x2xf32>
// CHECK: dtc.transpose %[[BLOCKS]] permutation = [0, 1, 3, 5, 2, 4]
// CHECK: dtc.matmul {{.*}} : (tensor<5x12xf32>, tensor<2x12x4xf32>) -> tensor<2x5x4xf32>

// The batch norm: the batch's statistics over [N, H, W], computed in f32
// under mixed precision; the running statistics updated by the momentum.
// CHECK: %[[MEAN:.*]] = dtc.reduce_mean %{{.*}} dims = [0, 2, 3] keep_dims {dtc.compute_in_f32} : tensor<2x4x4x4xf32> -> tensor<1x4x1x1xf32>
// CHECK: dtc.rsqrt {{.*}} {dtc.compute_in_f32}
// CHECK: %[[M:.*]] = dtc.mul %arg6, {{.*}} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>

// The max pool: a select per window position (the first maximum wins).
// CHECK: dtc.compare gt
// CHECK: dtc.select
// CHECK: return {{.*}} : tensor<2x4x2x2xf32>, tensor<2x5x2x2xf32>, tensor<4xf32>, tensor<4xf32>

// Malformed vision nodes: one diagnostic each, naming the node.
// RUN: not dtc-translate --import-onnx %S/Inputs/vision/conv_groups.onnx 2>&1 | FileCheck %s --check-prefix=GROUPS
// GROUPS: error: Conv node '/conv/Conv': group 2 does not fit 4 input channels and weights 'tensor<6x3x3x3xf32>'
// RUN: not dtc-translate --import-onnx %S/Inputs/vision/conv_window.onnx 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: error: Conv node '/conv/Conv': the window spans 3 positions of spatial dimension 0, larger than its padded size 2
// RUN: not dtc-translate --import-onnx %S/Inputs/vision/conv_auto_pad.onnx 2>&1 | FileCheck %s --check-prefix=AUTOPAD
// AUTOPAD: error: Conv node '/conv/Conv': unsupported auto_pad 'FOO'
// RUN: not dtc-translate --import-onnx %S/Inputs/vision/conv_transpose_auto_pad.onnx 2>&1 | FileCheck %s --check-prefix=AUTOPAD-T
// AUTOPAD-T: error: ConvTranspose node '/up/ConvTranspose': unsupported auto_pad 'FOO'
// RUN: not dtc-translate --import-onnx %S/Inputs/vision/pool_kernel.onnx 2>&1 | FileCheck %s --check-prefix=KERNEL
// KERNEL: error: MaxPool node '/pool/MaxPool': needs a kernel_shape with one entry per spatial dimension
// RUN: not dtc-translate --import-onnx %S/Inputs/vision/norm_rank.onnx 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: BatchNormalization node '/bn/BatchNormalization': input must be [N, C], not 'tensor<4xf32>'

// ONNX's model test data names inputs by position: an unnamed input_0.pb
// binds the first graph input (here '0'; the weights are initializers).
// RUN: rm -rf %t && dtc-translate --import-onnx /usr/share/libonnx-testdata/data/pytorch-operator/test_operator_conv/model.onnx -o %t.mlir
// RUN: dtc-run %t.mlir --inputs /usr/share/libonnx-testdata/data/pytorch-operator/test_operator_conv/test_data_set_0 --outputs %t | FileCheck %s --check-prefix=POSITION
// POSITION: 2: 20x13x48x38xf32 = 0.787359

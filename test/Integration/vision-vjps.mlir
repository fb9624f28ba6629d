// The VJPs of the vision ops (Conv 1-D/2-D/3-D with groups, dilation,
// strides and pads, a patch convolution, ConvTranspose, MaxPool and
// AveragePool in ceil mode, GlobalAveragePool, training-mode
// BatchNormalization, InstanceNormalization, LeakyRelu, Elu, Selu, PRelu)
// against central finite differences of PyTorch's float64 forward
// (Inputs/vision/make_vjp_cases.py): each model's loss is the sum of the
// op's result weighted by a random input, and one step's dumped gradients,
// of the input and of the op's weights, are within 1e-4 relative L2.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %S/../Utils/check_vjp_cases.sh %dtc_tools_dir %python %S/Inputs/vision/vjp %t conv2d conv1d conv3d_depthwise patch_conv conv_transpose2d max_pool2d avg_pool2d avg_pool1d_pad global_avg_pool batch_norm instance_norm leaky_relu elu selu prelu | FileCheck %s
// CHECK-NOT: FAIL
// CHECK-COUNT-15: 0 failed
// CHECK-NOT: FAIL

// Forms of older opsets: Cast names its target type with a string (opsets
// 1-5); Concat's axis defaults to 1 (before opset 4).
// RUN: dtc-translate --import-onnx %S/Inputs/cast_opset1.onnx | FileCheck %s --check-prefix=CAST
// CAST: dtc.cast %{{.*}} : tensor<3xf32> to tensor<3xi32>
// RUN: dtc-translate --import-onnx %S/Inputs/concat_opset1.onnx | FileCheck %s --check-prefix=CONCAT
// CONCAT: dtc.concat %{{.*}}, %{{.*}} dim = 1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>

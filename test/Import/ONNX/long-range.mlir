// A Range longer than the compiler folds (4,096 elements) imports as ops,
// start + iota * delta, and computes numpy.arange's values.
// RUN: rm -rf %t && %python %S/Inputs/make_long_range.py %t
// RUN: dtc-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: FileCheck %s < %t/model.mlir
// CHECK: dtc.iota dim = 0 : tensor<5000xi64>
// CHECK: dtc.iota dim = 0 : tensor<5003xi64>
// CHECK: dtc.cast %{{.*}} : tensor<5003xi64> to tensor<5003xf32>
// RUN: dtc-run %t/model.mlir --outputs %t/out > /dev/null
// RUN: %python %S/../../Utils/compare_npy.py %t/out/ints.npy %t/expected/ints.npy --rtol 0 --atol 0
// RUN: %python %S/../../Utils/compare_npy.py %t/out/floats.npy %t/expected/floats.npy --rtol 0 --atol 0

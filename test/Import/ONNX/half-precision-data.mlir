// bf16 and fp16 tensors as modern exports store them (raw_data, and
// int32_data holding one 16-bit pattern each) import and run: initializers,
// Constant values and a .pb input. The expected values are worked out by
// hand in the generator's docstring.
// RUN: rm -rf %t && %python %S/Inputs/make_half_precision.py %t
// RUN: dtc-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: dtc-run %t/model.mlir --inputs %t/inputs | FileCheck %s
// CHECK: scaled: 1x2xbf16 = 1 0.75
// CHECK: c: 1x2xbf16 = 2 1.5
// CHECK: z: 1x2xf16 = 4 3

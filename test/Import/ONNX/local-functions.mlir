// A model's local functions (FunctionProto, as onnxscript writes them) are
// inlined: a custom-domain call, an attribute bound by ref_attr_name, a
// function calling another, one function called twice; numpy computes the
// expected output.
// RUN: rm -rf %t && %python %S/Inputs/make_local_functions.py %t
// RUN: dtc-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: FileCheck %s < %t/model.mlir
// CHECK-COUNT-4: dtc.softmax
// CHECK-NOT: dtc.softmax
// RUN: dtc-run %t/model.mlir --inputs %t/inputs --outputs %t/out > /dev/null
// RUN: %python %S/../../Utils/compare_npy.py %t/out/y.npy %t/expected/y.npy --rtol 1e-6 --atol 1e-7

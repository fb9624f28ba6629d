// Every reference kernel against numpy (see Inputs/check_kernels.py: one
// single-op function per case, with numpy computing the expected result).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/check_kernels.py dtc-run %t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: {{[0-9]+}} passed, 0 failed

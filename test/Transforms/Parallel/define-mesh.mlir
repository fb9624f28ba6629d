// RUN: dtc-opt %s --dtc-define-mesh="shape=tp=2,dp=4" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not dtc-opt %s --dtc-define-mesh="shape=tp=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// The mesh in the order given (tp first here), before the module's
// functions; a module that has the same mesh keeps it; another is an
// error.

// CHECK-LABEL: module
// CHECK-NEXT: dtc.mesh @mesh ["tp" = 2, "dp" = 4]
// CHECK-NEXT: func.func @f
func.func @f() {
  return
}

// -----

// CHECK-LABEL: module
// CHECK-NEXT: dtc.mesh @mesh ["tp" = 2, "dp" = 4]
// CHECK-NOT: dtc.mesh
module {
  dtc.mesh @mesh ["tp" = 2, "dp" = 4]
}

// -----

module {
  // expected-error @+1 {{dtc-define-mesh: the module's mesh differs from the one asked for (tp=2,dp=4)}}
  dtc.mesh @mesh ["dp" = 4, "tp" = 2]
}

// -----

module {
  // expected-error @+1 {{dtc-define-mesh: the module has a mesh already (@grid); a step runs on one mesh}}
  dtc.mesh @grid ["dp" = 8]
}

// BAD: error: dtc-define-mesh: bad mesh axis 'tp=0' (expected NAME=SIZE, e.g. dp=2)

//===- TestDialect.h - the dtc_test dialect ---------------------*- C++ -*-===//
//
// Test-only ops (TestOps.td), registered by dtc-opt and dtc-run.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TEST_LIB_DIALECT_TEST_TESTDIALECT_H
#define DTC_TEST_LIB_DIALECT_TEST_TESTDIALECT_H

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/DialectRegistry.h"

#include "TestOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "TestOps.h.inc"

namespace mlir::dtc::test {

/// Adds the dtc_test dialect to `registry`.
void registerTestDialect(DialectRegistry &registry);

/// Registers the reference kernels of the dtc_test ops with the executor.
void registerTestKernels();

} // namespace mlir::dtc::test

#endif // DTC_TEST_LIB_DIALECT_TEST_TESTDIALECT_H

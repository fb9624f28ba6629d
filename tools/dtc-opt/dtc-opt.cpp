//===- dtc-opt.cpp - the dtc pass driver ----------------------------------===//
//
// mlir-opt for dtc: parses a module, runs the requested passes and pipelines,
// prints the result. Registers the dtc dialect, the upstream dialects dtc IR
// uses, the dtc passes, the upstream general-purpose passes and the test
// dialect and passes of test/lib.
//
//===----------------------------------------------------------------------===//

#include "TestDialect.h"
#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::dtc::test {
void registerTestShardingRulesPass();
void registerTestCheckKernelsPass();
void registerTestVectorizeKernelsPass();
} // namespace mlir::dtc::test

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::dtc::registerDTCPasses();
  mlir::dtc::test::registerTestShardingRulesPass();
  mlir::dtc::test::registerTestCheckKernelsPass();
  mlir::dtc::test::registerTestVectorizeKernelsPass();
  mlir::dtc::test::registerTestKernels();
  mlir::DialectRegistry registry;
  registry.insert<mlir::dtc::DTCDialect, mlir::func::FuncDialect>();
  mlir::dtc::test::registerTestDialect(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dtc pass driver\n", registry));
}

//===- dtc-opt.cpp - the dtc pass driver ----------------------------------===//
//
// mlir-opt for dtc: parses a module, runs the requested passes and pipelines,
// prints the result. Registers the dtc dialect, the upstream dialects dtc IR
// uses, the dtc passes and the upstream general-purpose passes.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::dtc::registerDTCPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::dtc::DTCDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dtc pass driver\n", registry));
}

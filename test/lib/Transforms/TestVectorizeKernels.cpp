//===- TestVectorizeKernels.cpp - loop kernels as vector tiles, printed ---===//
//
// dtc-opt --dtc-test-vectorize-kernels builds the kernel of each fusion
// group of a module (buildLoopKernel: loop and multi-tensor groups as
// linalg, row-reduction groups as row loops), runs dtc-vectorize-kernels on
// it and prints it, as the CPU target's lowering sees it before linalg
// becomes loops.
//
//===----------------------------------------------------------------------===//

#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct TestVectorizeKernels
    : public PassWrapper<TestVectorizeKernels, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestVectorizeKernels)

  StringRef getArgument() const final { return "dtc-test-vectorize-kernels"; }
  StringRef getDescription() const final {
    return "Print the kernel of every fusion group after "
           "dtc-vectorize-kernels";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registerKernelDialects(registry);
  }

  void runOnOperation() override {
    OwningOpRef<ModuleOp> kernels = ModuleOp::create(getOperation().getLoc());
    int64_t count = 0;
    getOperation().walk([&](FusionOp fusion) {
      std::string name = "kernel" + std::to_string(count++);
      if (failed(buildLoopKernel(fusion, *kernels, name)))
        signalPassFailure();
    });
    PassManager pm(&getContext());
    pm.addNestedPass<func::FuncOp>(createVectorizeKernelsPass());
    if (failed(pm.run(*kernels)))
      return signalPassFailure();
    llvm::outs() << *kernels << "\n";
  }
};

} // namespace

namespace mlir::dtc::test {
void registerTestVectorizeKernelsPass() {
  PassRegistration<TestVectorizeKernels>();
}
} // namespace mlir::dtc::test

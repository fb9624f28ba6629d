//===- TestCheckLoopKernels.cpp - every loop group compiled and checked ---===//
//
// dtc-opt --dtc-test-check-loop-kernels lowers each `loop` and
// `multi_tensor` fusion group of a fused step to its kernel, compiles it in
// process and checks it against the reference executor on random inputs
// (LoopKernelCheck.h); an error at each group that disagrees, and one line with
// the count.
//
//===----------------------------------------------------------------------===//

#include "LoopKernelCheck.h"

#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct TestCheckLoopKernels
    : public PassWrapper<TestCheckLoopKernels, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestCheckLoopKernels)

  StringRef getArgument() const final { return "dtc-test-check-loop-kernels"; }
  StringRef getDescription() const final {
    return "Compile every loop and multi-tensor fusion group and check it "
           "against the reference executor on random inputs";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registerKernelDialects(registry);
  }

  void runOnOperation() override {
    int64_t checked = 0, disagreed = 0;
    getOperation().walk([&](FusionOp fusion) {
      if (fusion.getKind() == FusionKind::RowReduction)
        return;
      ++checked;
      std::string problem = test::checkLoopKernel(fusion, checked);
      if (!problem.empty()) {
        ++disagreed;
        fusion.emitError("the compiled loop kernel disagrees with the "
                         "reference executor: ")
            << problem;
      }
    });
    llvm::outs() << "checked " << checked << " loop kernels, " << disagreed
                 << " disagree\n";
    if (disagreed)
      signalPassFailure();
  }
};

} // namespace

namespace mlir::dtc::test {
void registerTestCheckLoopKernelsPass() {
  PassRegistration<TestCheckLoopKernels>();
}
} // namespace mlir::dtc::test

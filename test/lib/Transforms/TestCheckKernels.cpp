//===- TestCheckKernels.cpp - every kernel compiled and checked -----------===//
//
// dtc-opt --dtc-test-check-kernels lowers each `loop` and `multi_tensor`
// fusion group of a fused step, and each other op the CPU backend has a
// kernel for, to its kernel, compiles it in process and checks it against
// the reference executor on random inputs (KernelCheck.h); an error at
// each kernel that disagrees, and one line with the counts.
//
//===----------------------------------------------------------------------===//

#include "KernelCheck.h"

#include "dtc/Conversion/FusionToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct TestCheckKernels
    : public PassWrapper<TestCheckKernels, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestCheckKernels)

  StringRef getArgument() const final { return "dtc-test-check-kernels"; }
  StringRef getDescription() const final {
    return "Compile every fusion group and every op with a kernel of its "
           "own, and check each against the reference executor on random "
           "inputs";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registerKernelDialects(registry);
  }

  void runOnOperation() override {
    int64_t groups = 0, reductions = 0, ops = 0, disagreed = 0;
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (Operation &op : func.getBody().getOps()) {
        if (!test::hasCheckableKernel(&op))
          continue;
        auto fusion = dyn_cast<FusionOp>(op);
        ++(!fusion                                        ? ops
           : fusion.getKind() == FusionKind::RowReduction ? reductions
                                                          : groups);
        std::string problem = test::checkKernel(&op, groups + reductions + ops);
        if (!problem.empty()) {
          ++disagreed;
          op.emitError("the compiled kernel disagrees with the reference "
                       "executor: ")
              << problem;
        }
      }
    llvm::outs() << "checked " << groups << " loop kernels, " << reductions
                 << " reduction kernels and " << ops << " op kernels, "
                 << disagreed << " disagree\n";
    if (disagreed)
      signalPassFailure();
  }
};

} // namespace

namespace mlir::dtc::test {
void registerTestCheckKernelsPass() { PassRegistration<TestCheckKernels>(); }
} // namespace mlir::dtc::test

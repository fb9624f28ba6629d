//===- Pipelines.cpp - dtc pass pipelines and registration ----------------===//

#include "dtc/Transforms/Passes.h"
#include "dtc/Transforms/Training/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::dtc {
#define GEN_PASS_REGISTRATION
#include "dtc/Transforms/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

void mlir::dtc::buildSimplifyPipeline(OpPassManager &pm,
                                      const SimplifyPipelineOptions &options) {
  FoldConstantsOptions fold;
  fold.maxElements = options.maxConstantElements;
  pm.addNestedPass<func::FuncOp>(createFoldConstants(fold));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::dtc::registerDTCPasses() {
  registerDTCTransformsPasses();
  registerTrainingPasses();
  PassPipelineRegistration<SimplifyPipelineOptions>(
      "dtc-simplify",
      "Fold constant subgraphs (dtc-fold-constants), canonicalize and CSE",
      buildSimplifyPipeline);
}

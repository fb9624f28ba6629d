//===- VerifyPartition.cpp - the per-rank program against one device ------===//
//
// dtc-training's `verify` (dtc-compile --verify): the per-rank half of the
// pipeline runs here, on the module, and once more without a mesh on a
// tagged copy of the global step nested in it for the time being (so that
// both run as dynamic pipelines of this pass); the two programs are then
// run and compared (Verification/StepVerifier.h).
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Passes.h"

#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Runtime/Communicator.h"
#include "dtc/Verification/StepVerifier.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_VERIFYPARTITION
#include "dtc/Transforms/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct VerifyPartitionPass
    : public dtc::impl::VerifyPartitionBase<VerifyPartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TrainingPipelineOptions options, oneDevice;
    if (failed(options.parseFromString(training)) ||
        failed(oneDevice.parseFromString(training))) {
      module.emitError("dtc-verify-partition: cannot parse training='")
          << training << "'";
      return signalPassFailure();
    }
    OpPassManager ranks(ModuleOp::getOperationName());
    buildRankProgramPipeline(ranks, options);
    MeshShape mesh;
    bool partitioned = (!options.mesh.empty() &&
                        MeshShape::parse(options.mesh, mesh).empty() &&
                        mesh.numDevices() > 1) ||
                       options.gradAccum > 1;
    // Recomputation is checked against the step without it, too.
    if (!partitioned && options.remat == "none") {
      llvm::errs() << "dtc-verify-partition: one device, nothing to compare\n";
      if (failed(runPipeline(ranks, module)))
        signalPassFailure();
      return;
    }
    oneDevice.mesh = "";
    oneDevice.zero = 0;
    oneDevice.sequenceParallel = false;
    oneDevice.shardingSpec = "";
    oneDevice.bucketMB = 0;
    oneDevice.gradAccum = 1;
    oneDevice.remat = "none";

    // The single-device step, from a tagged copy nested here while its
    // pipeline runs.
    tagOps(module);
    OpBuilder b(module.getBodyRegion());
    auto copy = cast<ModuleOp>(b.clone(*module));
    OpPassManager single(ModuleOp::getOperationName());
    buildRankProgramPipeline(single, oneDevice);
    if (failed(runPipeline(single, copy))) {
      copy.erase();
      return signalPassFailure();
    }
    OwningOpRef<ModuleOp> reference(copy);
    copy->remove();
    if (failed(runPipeline(ranks, module)))
      return signalPassFailure();

    auto step = [](ModuleOp m) -> func::FuncOp {
      for (auto func : m.getOps<func::FuncOp>())
        if (succeeded(TrainingStep::get(func)))
          return func;
      return {};
    };
    func::FuncOp one = step(*reference), perRank = step(module);
    if (!one || !perRank) {
      stripTags(module);
      return;
    }
    StepVerifyOptions verify;
    verify.seed = options.verifySeed;
    verify.noise = options.verifyNoise;
    if (options.precision != Precision::FP32) {
      // Half-precision sums in another order: the mixed-precision tests'
      // tolerances.
      verify.lossRtol = 1.6e-2;
      verify.gradRl2 = 0.1;
      verify.updateRl2 = 0.2;
      verify.valueRl2 = 5e-2;
    }
    if (failed(verifyRankProgram(one, perRank, verify, llvm::errs())))
      return signalPassFailure();
    stripTags(module);
  }
};

} // namespace

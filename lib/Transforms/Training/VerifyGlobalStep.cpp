//===- VerifyGlobalStep.cpp - the global step before it is partitioned ----===//
//
// The end of the global-step phase: what the parallelism passes assume of
// the step they partition, checked once, so that a pass that broke it is
// found here and not as a wrong layout later.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_VERIFYGLOBALSTEP
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct VerifyGlobalStepPass
    : public dtc::impl::VerifyGlobalStepBase<VerifyGlobalStepPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !getStepAttr(func))
      return;
    if (failed(verifyStep(func)))
      signalPassFailure();
  }

  LogicalResult verifyStep(func::FuncOp func) {
    auto fail = [&]() { return func.emitError("dtc-verify-global-step: "); };
    FailureOr<TrainingStep> step = TrainingStep::get(func);
    if (failed(step))
      return failure();
    Value loss = step->getLoss();
    if (!loss)
      return fail() << "the step has no loss";
    auto lossType = dyn_cast<RankedTensorType>(loss.getType());
    if (!lossType || lossType.getRank() != 0 ||
        !lossType.getElementType().isF32())
      return fail() << "the loss is " << loss.getType()
                    << ", not a tensor<f32> scalar";
    for (const TrainingStep::Parameter &param : step->getParameters()) {
      if (!param.trainable) {
        if (param.gradient)
          return fail() << "the frozen parameter '" << param.name
                        << "' has a gradient";
        continue;
      }
      if (!param.gradient)
        return fail() << "the trainable parameter '" << param.name
                      << "' has no gradient";
      Type paramType = func.getArgument(param.argument).getType();
      Type gradType = func.getResultTypes()[*param.gradient];
      if (paramType != gradType)
        return fail() << "the gradient of '" << param.name << "' is "
                      << gradType << ", its parameter " << paramType;
    }
    // Global: one program for the whole batch and every parameter, with
    // no layout and no communication yet.
    if (step->getAttr().getMesh())
      return fail() << "the step already runs on a mesh";
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (func.getArgAttr(i, kShardingAttrName))
        return fail() << "argument " << i << " is already laid out";
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (func.getResultAttr(i, kShardingAttrName))
        return fail() << "result " << i << " is already laid out";
    WalkResult walk = func.walk([&](Operation *op) {
      if (isa<CollectiveOpInterface, ShardOp>(op)) {
        op->emitError("dtc-verify-global-step: '")
            << op->getName() << "' in the global step (it belongs to a "
            << "per-rank program)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }
};

} // namespace

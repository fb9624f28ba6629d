//===- VerifyRankProgram.cpp - the per-rank step, as dtc-run will take it -===//
//
// The end of the per-rank phase: the step is what a runner can bind and
// run on each rank of its mesh. The same checks as dtc-run's, made at
// compile time, plus those only the IR can show (each collective on the
// step's mesh, each parameter updated).
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_VERIFYRANKPROGRAM
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct VerifyRankProgramPass
    : public dtc::impl::VerifyRankProgramBase<VerifyRankProgramPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !getStepAttr(func))
      return;
    if (failed(verifyStep(func)))
      signalPassFailure();
  }

  LogicalResult verifyStep(func::FuncOp func) {
    auto fail = [&]() { return func.emitError("dtc-verify-rank-program: "); };
    FailureOr<TrainingStep> step = TrainingStep::get(func);
    if (failed(step))
      return failure();
    FailureOr<StepSignature> signature = step->getSignature();
    if (failed(signature))
      return failure();
    if (std::string error = signature->check(); !error.empty())
      return fail() << error;
    for (const TrainingStep::Parameter &param : step->getParameters())
      if (param.trainable && !step->getUpdate(param.argument))
        return fail() << "the trainable parameter '" << param.name
                      << "' has no update (dtc-optimizer has not run)";
    FlatSymbolRefAttr mesh = step->getAttr().getMesh();
    if (mesh && !step->getMesh())
      return fail() << "the step runs on " << mesh << ", which is no dtc.mesh";
    WalkResult walk = func.walk([&](CollectiveOpInterface collective) {
      if (collective.getMeshAttr() == mesh)
        return WalkResult::advance();
      InFlightDiagnostic diag =
          collective->emitError("dtc-verify-rank-program: a collective over ");
      diag << collective.getMeshAttr() << " in a step that runs on ";
      if (mesh)
        diag << mesh;
      else
        diag << "one device";
      return WalkResult::interrupt();
    });
    return failure(walk.wasInterrupted());
  }
};

} // namespace

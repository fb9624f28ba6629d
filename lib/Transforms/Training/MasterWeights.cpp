//===- MasterWeights.cpp - bf16 parameters and gradients ------------------===//
//
// Mixed precision as the ZeRO paper counts it: the parameters the step
// reads and the gradients it returns are bf16; the f32 copy the optimizer
// updates (the master weights) is optimizer state, which dtc-optimizer adds
// for any parameter stored in less than f32.
//
//===----------------------------------------------------------------------===//

#include "Signature.h"
#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_MASTERWEIGHTS
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct MasterWeightsPass
    : public dtc::impl::MasterWeightsBase<MasterWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (type != HalfType::BF16) {
      func.emitError("dtc-master-weights: parameters are stored in bf16 "
                     "only (fp16 training keeps f32 parameters and scales "
                     "the loss)");
      return signalPassFailure();
    }
    // Its gradients are what it stores in bf16: before dtc-autodiff it
    // would change the forward alone.
    FailureOr<TrainingStep> step = TrainingStep::get(func);
    if (failed(step))
      return signalPassFailure();
    for (const TrainingStep::Parameter &param : step->getParameters())
      if (param.trainable && !param.gradient) {
        func.emitError("dtc-master-weights: parameter '")
            << param.name
            << "' has no gradient result (run dtc-autodiff first)";
        return signalPassFailure();
      }
    OpBuilder b(&getContext());
    Type low = b.getBF16Type();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (const TrainingStep::Parameter &info : step->getParameters()) {
      if (!info.trainable)
        continue;
      BlockArgument param = func.getArgument(info.argument);
      auto f32Type = dyn_cast<RankedTensorType>(param.getType());
      if (!f32Type || !f32Type.getElementType().isF32())
        continue;
      auto lowType = f32Type.clone(low);
      param.setType(lowType);
      for (OpOperand &use : llvm::make_early_inc_range(param.getUses())) {
        Operation *user = use.getOwner();
        auto cast = dyn_cast<CastOp>(user);
        if (cast && cast.getType() == lowType) {
          cast.getResult().replaceAllUsesWith(param);
          cast.erase();
          continue;
        }
        if (isa<func::ReturnOp>(user))
          continue;
        // A reader computing in f32 reads the bf16 value widened.
        b.setInsertionPoint(user);
        use.set(CastOp::create(b, user->getLoc(), f32Type, param));
      }
      // The gradient, summed in f32 over the uses, returned in bf16.
      OpOperand &operand = ret->getOpOperand(*info.gradient);
      if (operand.get().getType() == f32Type) {
        b.setInsertionPoint(ret);
        operand.set(CastOp::create(b, ret.getLoc(), lowType, operand.get()));
      }
    }
    func.setFunctionType(FunctionType::get(
        &getContext(), func.getBody().front().getArgumentTypes(),
        ret.getOperandTypes()));
    if (failed(verify(func)))
      return signalPassFailure();
  }
};

} // namespace

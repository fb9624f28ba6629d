//===- Autodiff.cpp - reverse-mode differentiation of the loss ------------===//
//
// Classic reverse mode over the function's single block: find the values
// that depend on a trainable parameter (active) and that the loss depends on
// (needed), then walk the ops backwards, asking each one on both paths for
// its VJP and summing the gradients of values used more than once. The
// backward ops are appended before the return, so they read the forward
// values directly (what rematerialization passes later trade for memory).
//
//===----------------------------------------------------------------------===//

#include "Signature.h"
#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/DeadOps.h"
#include "dtc/Dialect/DTC/IR/SignatureEditor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_AUTODIFF
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

struct AutodiffPass : public dtc::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    std::optional<unsigned> lossIndex = getLossResult(func);
    if (!lossIndex || *lossIndex >= ret.getNumOperands() ||
        !isFloatTensor(ret.getOperand(*lossIndex)) ||
        cast<RankedTensorType>(ret.getOperand(*lossIndex).getType())
                .getRank() != 0) {
      func.emitError("dtc-autodiff needs a training step with a scalar float "
                     "loss (dtc.step's loss; run dtc-attach-loss first)");
      return signalPassFailure();
    }
    Value loss = ret.getOperand(*lossIndex);
    SmallVector<BlockArgument> params = trainableParameters(func);
    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);

    // Active: float values computed from a trainable parameter.
    llvm::DenseSet<Value> active;
    for (BlockArgument param : params)
      if (isFloatTensor(param))
        active.insert(param);
    for (Operation *op : forward)
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value result : op->getResults())
          if (isFloatTensor(result))
            active.insert(result);
    // Needed: values the loss is computed from.
    llvm::DenseSet<Value> needed{loss};
    for (Operation *op : llvm::reverse(forward))
      if (llvm::any_of(op->getResults(),
                       [&](Value v) { return needed.contains(v); }))
        needed.insert(op->operand_begin(), op->operand_end());

    OpBuilder builder(ret);
    llvm::DenseMap<Value, Value> grads;
    auto accumulate = [&](Value value, Value grad, Location loc) {
      Value &slot = grads[value];
      slot = slot ? AddOp::create(builder, loc, slot, grad).getResult() : grad;
    };
    // The backward pass starts from d loss / d loss = 1, or from the loss
    // scale under dynamic loss scaling (dtc-mixed-precision type=f16).
    auto lossType = cast<RankedTensorType>(loss.getType());
    if (BlockArgument scale = getStateArgument(func, StateKind::LossScale))
      grads[loss] =
          scale.getType() == lossType
              ? Value(scale)
              : CastOp::create(builder, func.getLoc(), lossType, scale)
                    .getResult();
    else
      grads[loss] = ConstantOp::create(
          builder, func.getLoc(),
          DenseElementsAttr::get(
              lossType, FloatAttr::get(lossType.getElementType(), 1.0)));

    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultGrads;
      bool anyGrad = false;
      for (Value result : op->getResults()) {
        resultGrads.push_back(grads.lookup(result));
        anyGrad |= static_cast<bool>(resultGrads.back());
      }
      bool onPath = llvm::any_of(op->getOperands(), [&](Value v) {
        return active.contains(v) && needed.contains(v);
      });
      if (!anyGrad || !onPath)
        continue;
      auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
      if (!differentiable) {
        op->emitError("'") << op->getName()
                           << "' has no VJP but lies on a path from "
                              "trainable parameters to the loss";
        return signalPassFailure();
      }
      SmallVector<Value> operandGrads;
      if (failed(differentiable.buildVJP(builder, resultGrads, operandGrads)))
        return signalPassFailure();
      ++numDifferentiated;
      for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
        if (grad && active.contains(operand))
          accumulate(operand, grad, op->getLoc());
    }

    SignatureEditor signature(func);
    for (BlockArgument param : params) {
      Value grad = grads.lookup(param);
      if (!grad) {
        auto type = cast<RankedTensorType>(param.getType());
        grad = ConstantOp::create(
            builder, func.getLoc(),
            DenseElementsAttr::get(type,
                                   FloatAttr::get(type.getElementType(), 0.0)));
      }
      signature.addResult(
          grad, {builder.getNamedAttr(
                    kGradAttrName, builder.getStringAttr(parameterName(param)))});
    }
    signature.commit();
    if (!eraseDeadAdjoints)
      return;
    // The VJPs also built the adjoints of operands nothing differentiates
    // (a mask's): unused, and better gone before a partitioner
    // communicates for them.
    DenseSet<Operation *> forwardOps(forward.begin(), forward.end());
    eraseDeadOps(body, [&](Operation *op) { return forwardOps.contains(op); });
  }
};

} // namespace

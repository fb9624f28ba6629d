//===- MixedPrecision.cpp - bf16 compute with f32 master weights ----------===//

#include "Signature.h"
#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <limits>

namespace mlir::dtc {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// A mixture of experts' router computes in f32 (Megatron's
/// --moe-router-dtype fp32): the scores a top_k chooses experts by, back
/// through their softmax, scaling, bias and casts to the projection that
/// makes them, and its weight's transpose. A choice that flips on a 16-bit
/// rounding would send a token to another expert.
void markRoutersF32(func::FuncOp func) {
  UnitAttr unit = UnitAttr::get(func.getContext());
  func.walk([&](TopKOp topK) {
    Value scores = topK.getInput();
    while (Operation *def = scores.getDefiningOp()) {
      if (!isa<SoftmaxOp, LogSoftmaxOp, CastOp, AddOp, SubOp, MulOp, DivOp,
               MatmulOp>(def))
        break;
      def->setAttr(kComputeInF32AttrName, unit);
      if (auto matmul = dyn_cast<MatmulOp>(def)) {
        for (Value operand : {matmul.getLhs(), matmul.getRhs()})
          if (auto transpose = operand.getDefiningOp<TransposeOp>();
              transpose && isa<BlockArgument>(transpose.getInput()))
            transpose->setAttr(kComputeInF32AttrName, unit);
        break;
      }
      // Through the operand that carries the scores (the others are
      // biases and constants).
      Value next;
      for (Value operand : def->getOperands())
        if (operand.getType() == def->getResult(0).getType() ||
            (isa<CastOp>(def) && isFloatTensor(operand.getType())))
          next = operand;
      if (!next)
        break;
      scores = next;
    }
  });
}

struct MixedPrecisionPass
    : public dtc::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // On the forward, so that the loss is built in f32 and autodiff
    // differentiates the 16-bit forward.
    if (getLossResult(func)) {
      func.emitError("dtc-mixed-precision runs on the forward, before "
                     "dtc-attach-loss: this function has a loss already");
      return signalPassFailure();
    }
    OptionRanges ranges;
    ranges
        .check("init-scale", initScale, 0, std::numeric_limits<float>::max(),
               /*lowOpen=*/true)
        .require(growthInterval > 0, "option 'growth-interval' is " +
                                         llvm::Twine(growthInterval) +
                                         ": it must be at least 1");
    if (failed(ranges.verify(func)))
      return signalPassFailure();
    OpBuilder b(&getContext());
    Type low = type == HalfType::F16 ? Type(b.getF16Type())
                                     : Type(b.getBF16Type());
    Type f32 = b.getF32Type();
    auto castTo = [&](Value value, Type elementType, Location loc) -> Value {
      auto type = cast<RankedTensorType>(value.getType());
      if (type.getElementType() == elementType)
        return value;
      return CastOp::create(b, loc, type.clone(elementType), value);
    };

    markRoutersF32(func);
    Block &body = func.getBody().front();
    for (Operation &op :
         llvm::make_early_inc_range(body.without_terminator())) {
      if (isa<ConstantOp>(op)) // cast where used
        continue;
      bool floatOp = llvm::any_of(op.getOperandTypes(), isFloatTensor) ||
                     llvm::any_of(op.getResultTypes(), isFloatTensor);
      if (!floatOp)
        continue;
      Type target = op.hasTrait<OpTrait::dtc::ComputesInF32>() ||
                            op.hasAttr(kComputeInF32AttrName)
                        ? f32
                        : low;
      b.setInsertionPoint(&op);
      // A cast per use: a value used twice gets two casts, whose gradients
      // meet in the higher precision.
      for (OpOperand &operand : op.getOpOperands())
        if (isFloatTensor(operand.get().getType()))
          operand.set(castTo(operand.get(), target, op.getLoc()));
      for (Value result : op.getResults())
        if (isFloatTensor(result.getType()))
          result.setType(
              cast<RankedTensorType>(result.getType()).clone(target));
    }
    // Results (the logits) go back to f32: the loss is computed in f32.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands())
      if (isFloatTensor(operand.get().getType()))
        operand.set(castTo(operand.get(), f32, ret.getLoc()));
    if (type == HalfType::F16)
      addLossScaling(func, b);
    if (failed(verify(func)))
      return signalPassFailure();
  }

  /// The state of dynamic loss scaling, which dtc-autodiff and
  /// dtc-optimizer act on, and its growth interval in the step's
  /// description.
  void addLossScaling(func::FuncOp func, OpBuilder &b) {
    auto scaleType = RankedTensorType::get({}, b.getF32Type());
    auto state = [&](StateKind kind) {
      return b.getNamedAttr(kStateAttrName,
                            StateAttr::get(b.getContext(), kind, StringAttr()));
    };
    appendArgument(
        func, scaleType,
        {state(StateKind::LossScale),
         b.getNamedAttr(
             kValueAttrName,
             DenseElementsAttr::get(scaleType, b.getF32FloatAttr(initScale)))});
    appendArgument(func, RankedTensorType::get({}, b.getI64Type()),
                   {state(StateKind::GrowthTracker)});
    setStepLossScaling(func, growthInterval);
  }
};

} // namespace

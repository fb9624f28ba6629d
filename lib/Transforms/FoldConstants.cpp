//===- FoldConstants.cpp - evaluate all-constant dtc ops ------------------===//

#include "dtc/Transforms/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "dtc/Transforms/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct FoldConstantsPass
    : public dtc::impl::FoldConstantsBase<FoldConstantsPass> {
  using Base::Base;

  void runOnOperation() override {
    // A failed evaluation (e.g. an out-of-range gather index) is a run-time
    // error, not a compile-time one: keep the op and its diagnostic quiet.
    ScopedDiagnosticHandler quiet(&getContext(),
                                  [](Diagnostic &) { return success(); });
    OpBuilder builder(&getContext());
    getOperation().walk([&](Operation *op) {
      if (!isa<DTCDialect>(op->getDialect()) || isa<ConstantOp>(op) ||
          op->getNumOperands() == 0)
        return;
      SmallVector<Tensor> operands;
      for (Value operand : op->getOperands()) {
        auto constant = operand.getDefiningOp<ConstantOp>();
        FailureOr<Tensor> value = constant ? tensorFromAttr(constant.getValue())
                                           : FailureOr<Tensor>(failure());
        if (failed(value))
          return;
        operands.push_back(std::move(*value));
      }
      for (Type type : op->getResultTypes())
        if (cast<RankedTensorType>(type).getNumElements() > maxElements)
          return;
      SmallVector<const Tensor *> operandPtrs;
      for (const Tensor &operand : operands)
        operandPtrs.push_back(&operand);
      SmallVector<Tensor> results;
      if (failed(evaluateOp(op, operandPtrs, results)))
        return;
      builder.setInsertionPoint(op);
      for (auto [result, tensor] : llvm::zip(op->getResults(), results))
        result.replaceAllUsesWith(ConstantOp::create(
            builder, op->getLoc(), denseAttrFromTensor(&getContext(), tensor)));
      llvm::SetVector<Operation *> inputs;
      for (Value operand : op->getOperands())
        inputs.insert(operand.getDefiningOp());
      op->erase();
      ++numFolded;
      // The operand constants precede `op`, so the walk is past them.
      for (Operation *input : inputs)
        if (input->use_empty())
          input->erase();
    });
  }
};

} // namespace

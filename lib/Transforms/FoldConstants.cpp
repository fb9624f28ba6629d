//===- FoldConstants.cpp - evaluate all-constant dtc ops ------------------===//
//
// Compile time must not depend on tensor sizes: a value is only evaluated
// when it and its operands are small (kMaxFoldedElements), and a splat is
// folded as one element, whatever its shape. Larger constant subgraphs (a
// causal mask from iota and compare, rotary tables, the loss's seeds) stay
// ops, for the executor or the kernels to compute.
//
//===----------------------------------------------------------------------===//

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

int64_t numElements(Type type) {
  return cast<RankedTensorType>(type).getNumElements();
}

/// The value of every element of a splat (or one-element) constant.
std::optional<Attribute> splatValue(ElementsAttr value) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || !(dense.isSplat() || dense.getNumElements() == 1))
    return std::nullopt;
  return dense.getSplatValue<Attribute>();
}

/// The results of `op` on splat operands `splats`, as splats of its result
/// types: a data-movement op repeats its operand's one value; an elementwise
/// op is evaluated once, on scalars. Failure for any other op.
LogicalResult foldSplats(Operation *op, ArrayRef<Attribute> splats,
                         SmallVectorImpl<Attribute> &results) {
  if (isa<ReshapeOp, TransposeOp, BroadcastOp, SliceOp>(op)) {
    results.push_back(
        SplatElementsAttr::get(cast<ShapedType>(op->getResultTypes()[0]),
                               splats.front()));
    return success();
  }
  if (!isElementwise(op))
    return failure();
  // A detached copy of `op` on rank-0 operands and results.
  OpBuilder detached(op->getContext());
  SmallVector<Value> scalars;
  SmallVector<Tensor> scalarTensors;
  for (auto [operand, splat] : llvm::zip(op->getOperands(), splats)) {
    auto type = RankedTensorType::get({}, getElementTypeOrSelf(operand));
    auto attr = DenseElementsAttr::get(type, splat);
    scalars.push_back(ConstantOp::create(detached, op->getLoc(), attr));
    scalarTensors.push_back(*tensorFromAttr(attr));
  }
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(scalars);
  state.addAttributes(op->getAttrs());
  for (Type type : op->getResultTypes())
    state.addTypes(RankedTensorType::get({}, getElementTypeOrSelf(type)));
  Operation *scalarOp = Operation::create(state);
  SmallVector<const Tensor *> operands;
  for (const Tensor &tensor : scalarTensors)
    operands.push_back(&tensor);
  SmallVector<Tensor> values;
  LogicalResult evaluated = evaluateOp(scalarOp, operands, values);
  scalarOp->destroy();
  for (Value scalar : scalars)
    scalar.getDefiningOp()->destroy();
  if (failed(evaluated))
    return failure();
  for (auto [type, value] : llvm::zip(op->getResultTypes(), values))
    results.push_back(SplatElementsAttr::get(
        cast<ShapedType>(type),
        *splatValue(denseAttrFromTensor(op->getContext(), value))));
  return success();
}

/// The results of `op` on small constant operands, evaluated.
LogicalResult foldSmall(Operation *op, ArrayRef<ElementsAttr> constants,
                        SmallVectorImpl<Attribute> &results) {
  SmallVector<Tensor> operands;
  for (ElementsAttr constant : constants) {
    FailureOr<Tensor> value = tensorFromAttr(constant);
    if (failed(value))
      return failure();
    operands.push_back(std::move(*value));
  }
  SmallVector<const Tensor *> operandPtrs;
  for (const Tensor &operand : operands)
    operandPtrs.push_back(&operand);
  SmallVector<Tensor> values;
  if (failed(evaluateOp(op, operandPtrs, values)))
    return failure();
  for (const Tensor &value : values)
    results.push_back(denseAttrFromTensor(op->getContext(), value));
  return success();
}

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
      SmallVector<ElementsAttr> constants;
      SmallVector<Attribute> splats;
      bool small = true;
      for (Value operand : op->getOperands()) {
        auto constant = operand.getDefiningOp<ConstantOp>();
        if (!constant)
          return;
        constants.push_back(constant.getValue());
        small &= numElements(operand.getType()) <= maxElements;
        if (std::optional<Attribute> splat = splatValue(constant.getValue()))
          splats.push_back(*splat);
      }
      for (Type type : op->getResultTypes())
        small &= numElements(type) <= maxElements;
      SmallVector<Attribute> results;
      bool allSplats = splats.size() == constants.size();
      if (!(allSplats && succeeded(foldSplats(op, splats, results))) &&
          !(small && succeeded(foldSmall(op, constants, results))))
        return;
      builder.setInsertionPoint(op);
      for (auto [result, attr] : llvm::zip(op->getResults(), results))
        result.replaceAllUsesWith(ConstantOp::create(
            builder, op->getLoc(), cast<ElementsAttr>(attr)));
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

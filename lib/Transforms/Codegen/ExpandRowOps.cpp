//===- ExpandRowOps.cpp - softmaxes and norms as reductions and arithmetic ===//
//
// A softmax, log-softmax, layer norm or RMS norm is one kernel of its own,
// and its neighbours (the residual add before a norm, the scaling before
// a softmax) are other kernels around it. Written as the reductions and
// elementwise ops it computes, dtc-fuse puts it into one row kernel with
// them. The log-softmax's output, a [tokens, vocab] value that the
// cross-entropy reads twice, then need not be stored at all: dtc-fuse
// copies its cheap subtractions into each group that reads it, which then
// reads the logits instead. The arithmetic is the op kernels' own (the
// same statistics, in the same order), so values change only by the
// rounding of a differently grouped computation.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Codegen/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_EXPANDROWOPS
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The values of `op`'s results, written as reductions and arithmetic.
SmallVector<Value> expand(OpEmitter &e, Operation *op) {
  auto statistics = [&](Value x, ArrayRef<int64_t> dims, double epsilon,
                        bool centred) {
    // mean (layer norm), 1 / sqrt(mean((x - mean)^2) + epsilon).
    Value mean = centred ? e.reduceMean(x, dims) : Value();
    Value d = centred ? e.sub(x, mean) : x;
    Value meanSquare = e.reduceMean(e.mul(d, d), dims);
    Value inv = e.rsqrt(e.add(meanSquare, e.scalar(epsilon, x)));
    return std::make_tuple(mean, d, inv);
  };
  if (auto norm = dyn_cast<LayerNormOp>(op)) {
    auto [mean, d, inv] = statistics(
        norm.getInput(),
        trailingDims(norm.getDim(), norm.getInput().getType().getRank()),
        norm.getEpsilon().convertToDouble(), true);
    Value y = e.mul(e.mul(d, inv), norm.getScale());
    if (norm.getBias())
      y = e.add(y, norm.getBias());
    return {y, mean, inv};
  }
  if (auto norm = dyn_cast<RMSNormOp>(op)) {
    auto [mean, x, inv] = statistics(
        norm.getInput(),
        trailingDims(norm.getDim(), norm.getInput().getType().getRank()),
        norm.getEpsilon().convertToDouble(), false);
    return {e.mul(e.mul(x, inv), norm.getScale())};
  }
  // A softmax or log-softmax along its last dimension.
  Value x = op->getOperand(0);
  SmallVector<int64_t> dims{cast<RankedTensorType>(x.getType()).getRank() - 1};
  Value shifted = e.sub(x, e.reduceMax(x, dims));
  Value exp = e.exp(shifted);
  Value sum = e.reduceSum(exp, dims, /*keepDims=*/true);
  if (isa<LogSoftmaxOp>(op))
    return {e.sub(shifted, e.log(sum))};
  return {e.div(exp, sum)};
}

/// Whether `op` is expanded: f32 or f64 (a bf16 or f16 op rounds its
/// results once; expanded, every intermediate would round), and a softmax
/// along the last dimension (the rows of a row kernel).
bool expands(Operation *op) {
  if (!isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp>(op))
    return false;
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  if (!element.isF32() && !element.isF64())
    return false;
  if (!isa<SoftmaxOp, LogSoftmaxOp>(op))
    return true;
  auto dim = op->getAttrOfType<IntegerAttr>("dim").getInt();
  return dim + 1 ==
         cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
}

struct ExpandRowOpsPass
    : public mlir::dtc::impl::ExpandRowOpsBase<ExpandRowOpsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> found;
    getOperation().walk([&](Operation *op) {
      if (expands(op))
        found.push_back(op);
    });
    for (Operation *op : found) {
      OpBuilder b(op);
      OpEmitter e(b, op->getLoc());
      for (auto [result, value] : llvm::zip(op->getResults(), expand(e, op)))
        result.replaceAllUsesWith(value);
      op->erase();
    }
  }
};

} // namespace

//===- ExpandAttention.cpp - attention as matmuls around a softmax --------===//
//
// dtc.attention's two batched products are most of its work; as GEMMs
// (OpenBLAS on the CPU) they run many times faster than a fused kernel's
// loops. The probabilities are a result the backward reads, so writing
// the scores out costs a buffer of the probabilities' size and nothing
// more. The softmax then goes the way of every other one (dtc-expand-row-
// ops: a row kernel with the scale and the mask).
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Codegen/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <limits>

namespace mlir::dtc {
#define GEN_PASS_DEF_EXPANDATTENTION
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// `x` ([batch, heads, rows, cols]) with each key/value head's group of
/// `group` query heads as one block of rows (`toGroups`), or back.
Value regroup(OpEmitter &e, Value x, int64_t group, bool toGroups) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  if (group == 1)
    return x;
  if (toGroups)
    return e.reshape(x,
                     {shape[0], shape[1] / group, group * shape[2], shape[3]});
  return e.reshape(x, {shape[0], shape[1] * group, shape[2] / group, shape[3]});
}

/// The attention's result and probabilities, as matmuls, elementwise ops,
/// a softmax and a dropout.
std::pair<Value, Value> expand(OpBuilder &b, AttentionOp op) {
  OpEmitter e(b, op.getLoc());
  Location loc = op.getLoc();
  int64_t group = op.getGroupSize();
  Value scores =
      regroup(e,
              MatmulOp::create(b, loc, regroup(e, op.getQ(), group, true),
                               op.getK(), false, true),
              group, false);
  Value q = op.getQ();
  scores = e.mul(scores, e.scalar(op.getScale().convertToDouble(), q));
  if (std::optional<APFloat> softcap = op.getSoftcap()) {
    double c = softcap->convertToDouble();
    scores = e.mul(e.tanh(e.div(scores, e.scalar(c, q))), e.scalar(c, q));
  }
  if (Value mask = op.getMask()) {
    if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1)) {
      double masked = op.getMaskedValue()
                          ? op.getMaskedValue()->convertToDouble()
                          : -std::numeric_limits<double>::infinity();
      scores = SelectOp::create(b, loc, mask, scores, e.scalar(masked, q));
    } else {
      scores = e.add(scores, mask);
    }
  }
  Value probs = SoftmaxOp::create(
      b, loc, scores,
      b.getI64IntegerAttr(cast<RankedTensorType>(scores.getType()).getRank() -
                          1));
  Value weights = probs;
  if (op.getDropoutRatio())
    weights = DropoutOp::create(b, loc, probs.getType(), probs, op.getStep(),
                                op.getOffset(), op.getDropoutRatioAttr(),
                                op.getSeedAttr(), op.getStreamAttr(),
                                op.getGlobalShapeAttr());
  Value result =
      regroup(e,
              MatmulOp::create(b, loc, regroup(e, weights, group, true),
                               op.getV(), false, false),
              group, false);
  return {result, probs};
}

struct ExpandAttentionPass
    : public mlir::dtc::impl::ExpandAttentionBase<ExpandAttentionPass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> found;
    getOperation().walk([&](AttentionOp op) {
      Type element = op.getQ().getType().getElementType();
      if (element.isF32() || element.isF64())
        found.push_back(op);
    });
    for (AttentionOp op : found) {
      OpBuilder b(op);
      auto [result, probs] = expand(b, op);
      op.getResult().replaceAllUsesWith(result);
      op.getProbs().replaceAllUsesWith(probs);
      op->erase();
    }
  }
};

} // namespace

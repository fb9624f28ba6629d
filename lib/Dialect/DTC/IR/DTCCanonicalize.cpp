//===- DTCCanonicalize.cpp - the dtc dialect's rewrite rules --------------===//
//
// Rules that the canonicalizer applies to any dtc program. Both avoid
// materializing tensors that only repeat their values along some
// dimensions: an iota varies along one dimension only, and an op that
// broadcasts its operands itself has no use for a broadcast copy.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// iota(dim d) : tensor<a x b x c> -> broadcast(iota(dim d) : tensor<1 x b x
/// 1>): the indices repeat along every other dimension. (The cross-entropy's
/// one-hot compares an iota of [batch, sequence, classes] i64 with the
/// labels; thin, it is classes integers.)
struct ThinIota : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(IotaOp iota,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(iota.getType());
    int64_t dim = iota.getDim();
    SmallVector<int64_t> thin(type.getRank(), 1);
    thin[dim] = type.getDimSize(dim);
    if (type.getShape() == ArrayRef<int64_t>(thin))
      return failure();
    Value indices =
        IotaOp::create(rewriter, iota.getLoc(), type.clone(thin), dim);
    rewriter.replaceOpWithNewOp<BroadcastOp>(iota, type, indices);
    return success();
  }
};

/// f(broadcast(x), y) -> f(x, y) for f an op that broadcasts its operands
/// itself, when its result stays the same: the broadcast copy is not made.
struct BroadcastIntoReader
    : OpTraitRewritePattern<OpTrait::dtc::BroadcastingElementwise> {
  using OpTraitRewritePattern::OpTraitRewritePattern;

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    for (OpOperand &operand : op->getOpOperands()) {
      auto broadcast = operand.get().getDefiningOp<BroadcastOp>();
      if (!broadcast)
        continue;
      SmallVector<ArrayRef<int64_t>> shapes;
      for (OpOperand &other : op->getOpOperands()) {
        Value value = &other == &operand ? broadcast.getInput() : other.get();
        shapes.push_back(cast<RankedTensorType>(value.getType()).getShape());
      }
      FailureOr<SmallVector<int64_t>> shape = broadcastShapes(shapes);
      if (failed(shape) || *shape != resultType.getShape())
        continue;
      rewriter.modifyOpInPlace(op, [&] { operand.set(broadcast.getInput()); });
      return success();
    }
    return failure();
  }
};

} // namespace

void DTCDialect::getCanonicalizationPatterns(RewritePatternSet &results) const {
  results.add<ThinIota, BroadcastIntoReader>(getContext());
}

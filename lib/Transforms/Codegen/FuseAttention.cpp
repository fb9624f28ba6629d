//===- FuseAttention.cpp - attention as FlashAttention-style kernels ------===//
//
// A 16-bit attention's probabilities are the largest activation of a
// transformer step ([batch, heads, queries, keys]: 1 GiB a layer for a
// batch of 8 sequences of 2048 tokens and 16 heads) and the backward reads
// them once. The fused kernels keep them in shared memory, tile by tile,
// and save each query row's logsumexp instead, from which the backward
// recomputes them (two more products per score, on tensor cores).
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Codegen/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_FUSEATTENTION
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The head dimensions the kernels tile: multiples of 16 (a tensor-core
/// fragment), at most 128 (their tiles' shared memory).
bool tiles(int64_t d) { return d % 16 == 0 && d <= 128; }

/// Whether `op` can be fused: 16-bit, tiled head dimensions, and its
/// probabilities read by backwards of this very attention alone.
bool fusible(AttentionOp op) {
  Type element = op.getQ().getType().getElementType();
  if (!element.isBF16() && !element.isF16())
    return false;
  if (!tiles(op.getQ().getType().getDimSize(3)) ||
      !tiles(op.getV().getType().getDimSize(3)))
    return false;
  for (OpOperand &use : op.getProbs().getUses()) {
    auto grad = dyn_cast<AttentionGradOp>(use.getOwner());
    if (!grad || &use != &grad.getProbsMutable() || grad.getQ() != op.getQ() ||
        grad.getK() != op.getK() || grad.getV() != op.getV() ||
        grad.getMask() != op.getMask() || grad.getStep() != op.getStep() ||
        grad.getOffset() != op.getOffset())
      return false;
  }
  return true;
}

struct FuseAttentionPass
    : public dtc::impl::FuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> found;
    getOperation().walk([&](AttentionOp op) {
      if (fusible(op))
        found.push_back(op);
    });
    for (AttentionOp op : found) {
      OpBuilder b(op);
      auto fused = FusedAttentionOp::create(
          b, op.getLoc(), op.getQ(), op.getK(), op.getV(), op.getMask(),
          op.getStep(), op.getOffset(), op.getScaleAttr(),
          op.getMaskedValueAttr(), op.getDropoutRatioAttr(), op.getSeedAttr(),
          op.getStreamAttr(), op.getGlobalShapeAttr(), op.getSoftcapAttr());
      for (Operation *user :
           llvm::make_early_inc_range(op.getProbs().getUsers())) {
        auto grad = cast<AttentionGradOp>(user);
        b.setInsertionPoint(grad);
        auto fusedGrad = FusedAttentionGradOp::create(
            b, grad.getLoc(), grad.getQ(), grad.getK(), grad.getV(),
            fused.getResult(), fused.getLse(), grad.getResultGrad(),
            grad.getMask(), grad.getStep(), grad.getOffset(),
            grad.getScaleAttr(), grad.getMaskedValueAttr(),
            grad.getDropoutRatioAttr(), grad.getSeedAttr(),
            grad.getStreamAttr(), grad.getGlobalShapeAttr(),
            grad.getSoftcapAttr());
        grad->replaceAllUsesWith(fusedGrad);
        grad->erase();
      }
      op.getResult().replaceAllUsesWith(fused.getResult());
      op->erase();
    }
  }
};

} // namespace

//===- AccumulateScatters.cpp - scatter-adds into the values they join ----===//
//
// Autodiff writes a gathered value's gradient as a scatter-add into zeros
// (the adjoint of gather), and a value read twice gets its gradients
// summed: a tied embedding's gradient is `head + scatter_add(d into
// zeros)`. As written, a step fills a [vocab, d] buffer with zeros,
// scatters into a copy of it and adds the head's gradient over the whole
// table: three passes over it. Scattered straight into the other addend
// (`scatter_add(d into head)`), it is one copy and the scattered rows.
// The same sums in another order: values change by rounding only.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Codegen/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_ACCUMULATESCATTERS
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// add(x, scatter_add(u into zeros[i])) -> scatter_add(u into x[i]), with x
/// of the sum's type and the scatter read by the add alone.
struct ScatterIntoAddend : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [scattered, addend] : {std::pair(add.getLhs(), add.getRhs()),
                                     std::pair(add.getRhs(), add.getLhs())}) {
      auto scatter = scattered.getDefiningOp<ScatterAddOp>();
      if (!scatter || !scatter->hasOneUse() ||
          !isFloatZeros(scatter.getInput()) ||
          addend.getType() != add.getType() ||
          scattered.getType() != add.getType())
        continue;
      rewriter.replaceOpWithNewOp<ScatterAddOp>(
          add, add.getType(), addend, scatter.getIndices(),
          scatter.getUpdates(), scatter.getDim());
      rewriter.eraseOp(scatter);
      return success();
    }
    return failure();
  }
};

struct AccumulateScattersPass
    : public mlir::dtc::impl::AccumulateScattersBase<AccumulateScattersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScatterIntoAddend>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

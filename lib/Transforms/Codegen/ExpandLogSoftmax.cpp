//===- ExpandLogSoftmax.cpp - log-softmax as x minus its log-sum-exp ------===//
//
// A log-softmax's output is a [tokens, vocab] value that the cross-entropy
// reads twice (the forward's pick of each label, the backward's
// exponential). Written as (x - max) - log(sum(exp(x - max))), with the
// row statistics kept as [tokens, 1] values, it need not be stored at all:
// dtc-fuse copies the cheap subtractions into each group that reads them,
// which then reads the logits instead. The same arithmetic, so values
// change only by the rounding of a differently grouped computation.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Codegen/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_EXPANDLOGSOFTMAX
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct ExpandLogSoftmaxPass
    : public mlir::dtc::impl::ExpandLogSoftmaxBase<ExpandLogSoftmaxPass> {
  void runOnOperation() override {
    SmallVector<LogSoftmaxOp> found;
    getOperation().walk([&](LogSoftmaxOp op) {
      Type element = op.getType().getElementType();
      // (bf16 and f16 round each op's result: the expansion would round
      // three times where the op rounds once.)
      if (element.isF32() || element.isF64())
        found.push_back(op);
    });
    for (LogSoftmaxOp op : found) {
      OpBuilder b(op);
      OpEmitter e(b, op.getLoc());
      Value x = op.getInput();
      int64_t dim = op.getDim();
      Value max = ReduceMaxOp::create(b, op.getLoc(), x, {dim}, true);
      Value shifted = e.sub(x, max);
      Value sum = e.reduceSum(e.exp(shifted), {dim}, true);
      op.getResult().replaceAllUsesWith(e.sub(shifted, e.log(sum)));
      op.erase();
    }
  }
};

} // namespace

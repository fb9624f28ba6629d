//===- ExpandAttentionGrad.cpp - attention's backward as its ops ----------===//

#include "dtc/Transforms/Training/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_EXPANDATTENTIONGRAD
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct ExpandAttentionGradPass
    : public dtc::impl::ExpandAttentionGradBase<ExpandAttentionGradPass> {
  void runOnOperation() override {
    SmallVector<AttentionGradOp> found;
    getOperation().walk([&](AttentionGradOp op) { found.push_back(op); });
    for (AttentionGradOp op : found) {
      OpBuilder b(op);
      op->replaceAllUsesWith(op.expand(b));
      op->erase();
    }
  }
};

} // namespace

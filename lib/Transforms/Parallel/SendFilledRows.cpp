//===- SendFilledRows.cpp - all-to-all-v for sorted experts' buffers ------===//
//
// dtc-sort-experts' buffers [E, groups x B, ...] hold each expert's rows of
// a routing group in its first slots and zeros after them (the gathered
// tokens are masked by `filled`, the outputs before the scatter back, and
// so every gradient of a buffer); under ep the all-to-alls between the
// experts and the rows move them whole. Marking their rows dimension lets
// the runtime send only the filled rows, counts first.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_SENDFILLEDROWS
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct SendFilledRowsPass
    : public dtc::impl::SendFilledRowsBase<SendFilledRowsPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    getOperation().walk([&](AllToAllOp exchange) {
      ArrayAttr axes = exchange.getAxes();
      bool overExperts =
          axes.size() == 1 && cast<StringAttr>(axes[0]).getValue() == "ep";
      int64_t split = exchange.getSplitDim(), concat = exchange.getConcatDim();
      if (overExperts && std::min(split, concat) == 0 &&
          std::max(split, concat) == 1)
        exchange.setRowsDimAttr(b.getI64IntegerAttr(1));
    });
  }
};

} // namespace

//===- SplitKernelRows.cpp - a kernel's rows shared among parts -----------===//
//
// A loop kernel that takes `%part, %parts` (buildLoopKernel) runs each of
// its outermost loops over its part's contiguous share of the iterations
// only (a rank-1 nest's vector loop steps by 8). The loops are its linalg
// ops tiled or lowered to scf, so their bounds are constants;
// everything else at the top of the kernel only reads (hoisted scalars,
// views), so parts may run at once on different threads, each computing its
// elements exactly as the whole kernel would.
//
//===----------------------------------------------------------------------===//

#include "dtc/Conversion/FusionToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

struct SplitKernelRows
    : public PassWrapper<SplitKernelRows, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitKernelRows)
  StringRef getArgument() const final { return "dtc-split-kernel-rows"; }

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!kernel->hasAttr(dtc::kKernelRowsAttr) || kernel.isExternal())
      return;
    Block &entry = kernel.getBody().front();
    unsigned n = entry.getNumArguments();
    Value part = entry.getArgument(n - 2), parts = entry.getArgument(n - 1);
    for (auto loop : llvm::make_early_inc_range(entry.getOps<scf::ForOp>())) {
      std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                             upper = getConstantIntValue(loop.getUpperBound()),
                             step = getConstantIntValue(loop.getStep());
      if (!lower || !upper || !step || *step <= 0 ||
          (*upper - *lower) % *step != 0) {
        loop.emitError("a kernel's rows are split among threads only over "
                       "constant loops of whole steps");
        return signalPassFailure();
      }
      OpBuilder b(loop);
      Location loc = loop.getLoc();
      auto constant = [&](int64_t v) {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      auto boundOf = [&](Value p) -> Value {
        // lower + step * (n * p / parts), n iterations (n * parts fits:
        // both are small).
        Value n = constant((*upper - *lower) / *step);
        Value share = arith::DivUIOp::create(
            b, loc, arith::MulIOp::create(b, loc, n, p), parts);
        return arith::AddIOp::create(
            b, loc, constant(*lower),
            arith::MulIOp::create(b, loc, constant(*step), share));
      };
      Value next = arith::AddIOp::create(b, loc, part, constant(1));
      loop.getLowerBoundMutable().assign(boundOf(part));
      loop.getUpperBoundMutable().assign(boundOf(next));
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::dtc::createSplitKernelRowsPass() {
  return std::make_unique<SplitKernelRows>();
}

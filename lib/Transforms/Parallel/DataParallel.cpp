//===- DataParallel.cpp - partition a step over the batch -----------------===//
//
// Data parallelism: each rank runs the program of its shard of the batch
// (BatchPartitioner), the partial sums all-reduced over the `dp` axis.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "BatchPartitioner.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_DATAPARALLEL
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct DataParallelPass : public dtc::impl::DataParallelBase<DataParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (size < 1) {
      module.emitError("dtc-data-parallel needs dp >= 1");
      return signalPassFailure();
    }
    if (size == 1)
      return;
    OpBuilder b(module.getBodyRegion());
    MeshOp::create(b, module.getLoc(), "mesh", b.getStrArrayAttr({"dp"}),
                   b.getDenseI64ArrayAttr({size}));
    auto meshRef = FlatSymbolRefAttr::get(&getContext(), "mesh");
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!func.isExternal() &&
          failed(partitionBatch(func, size, meshRef, "dp", "data-parallel")))
        return signalPassFailure();
  }
};

} // namespace

//===- DataParallel.cpp - partition a step over the batch -----------------===//
//
// Data parallelism: each rank runs the program of its shard of the batch
// (the batch partitioner, Partitioner.h), the partial sums all-reduced over
// the `dp` axis.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

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
    FlatSymbolRefAttr meshRef = meshWithAxis(module, "dp", size);
    if (!meshRef)
      return signalPassFailure();
    for (auto func :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      if (failed(partitionBatch(func, size, meshRef, "dp", "data-parallel",
                                /*rankIndexed=*/true, strictSharding)))
        return signalPassFailure();
      SignatureEditor signature(func);
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (signature.getArgAttr(i, kInputAttrName))
          recordSharding(signature, i, meshRef, 0, "dp");
      signature.commit();
      setStepMesh(func, meshRef);
    }
  }
};

} // namespace

//===- Passes.h - parallelism passes ----------------------------*- C++ -*-===//
//
// The passes that turn a global-view training step into a per-rank program
// with explicit collectives, and that run its batch in pieces (so far:
// data parallelism and gradient accumulation, both over the batch).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_PARALLEL_PASSES_H
#define DTC_TRANSFORMS_PARALLEL_PASSES_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Transforms/Options.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "dtc/Transforms/Parallel/Passes.h.inc"

/// A parameter tensor parallelism splits: argument `argument` along
/// dimension `dim`.
struct TensorParallelSplit {
  unsigned argument;
  int64_t dim;
};

/// The parameter layouts dtc-tensor-parallel would give the global step
/// `func` over `tp` ranks (the Megatron matcher's under
/// TPStrategy::Megatron, then `shardingSpec`'s), without partitioning: what
/// dtc-plan sizes each rank's parameters by.
FailureOr<SmallVector<TensorParallelSplit>>
getTensorParallelSplits(func::FuncOp func, int64_t tp, TPStrategy strategy,
                        StringRef shardingSpec);

/// The arguments of `func` dtc-expert-parallel splits along the experts
/// (their first dimension): a mixture of experts' stacked weights. Empty
/// without a router.
SmallVector<unsigned> getExpertParameters(func::FuncOp func);

/// Registers the parallelism passes (for dtc-opt).
void registerParallelPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_PARALLEL_PASSES_H

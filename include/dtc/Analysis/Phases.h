//===- Phases.h - forward, backward and optimizer ops -----------*- C++ -*-===//
//
// Which part of a training step each op belongs to, from what the step
// returns: the forward pass is what the loss depends on, the backward pass
// the rest of what the gradients depend on, the optimizer everything else
// (the updates, gradient clipping, loss-scale bookkeeping). Costs and times
// are reported per phase; remat and pipeline stages split along them.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_PHASES_H
#define DTC_ANALYSIS_PHASES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dtc {

enum class StepPhase : unsigned { Forward, Backward, Optimizer };
inline constexpr unsigned kNumStepPhases = 3;

/// "forward", "backward", "optimizer".
llvm::StringRef getStepPhaseName(StepPhase phase);

/// The phase of every op in `step`'s body (terminator excluded). The
/// forward roots are the step's loss (`dtc.step`'s `loss`), or, in a
/// function without one, every `dtc.output`; the backward roots are the
/// results marked `dtc.grad`.
llvm::DenseMap<Operation *, StepPhase> classifyStepPhases(func::FuncOp step);

/// The values of `func` that depend on the batch (its inputs, marked
/// kInputAttrName): everything else is the same for every row.
llvm::DenseSet<Value> getBatchDependentValues(func::FuncOp func);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_PHASES_H

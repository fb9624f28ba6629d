//===- StepCost.h - FLOPs and bytes of a step -------------------*- C++ -*-===//
//
// The sum of the ops' costs (CostOpInterface, through getOpCost) over a
// step, in total and per phase (forward, backward, optimizer): what a rank
// computes and moves per step, as XLA's cost analysis reports it (matmul,
// other arithmetic and transcendental FLOPs apart).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_STEPCOST_H
#define DTC_ANALYSIS_STEPCOST_H

#include "dtc/Analysis/Liveness.h"
#include "dtc/Analysis/Phases.h"
#include "dtc/Dialect/DTC/IR/OpCost.h"

#include <array>

namespace mlir::dtc {

struct StepCost {
  OpCost total;
  std::array<OpCost, kNumStepPhases> phases;

  const OpCost &phase(StepPhase p) const {
    return phases[static_cast<unsigned>(p)];
  }
};

/// The cost of running `schedule` (an op run twice counts twice), each entry
/// in its phase from `phases` (the optimizer's where it has none).
StepCost sumCosts(llvm::ArrayRef<ScheduledOp> schedule,
                  const llvm::DenseMap<Operation *, StepPhase> &phases);

/// The cost of `step` run once in program order.
StepCost analyzeCost(func::FuncOp step);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_STEPCOST_H

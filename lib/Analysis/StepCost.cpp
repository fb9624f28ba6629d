//===- StepCost.cpp - FLOPs and bytes of a step ---------------------------===//

#include "dtc/Analysis/StepCost.h"

using namespace mlir;
using namespace mlir::dtc;

StepCost
mlir::dtc::sumCosts(ArrayRef<ScheduledOp> schedule,
                    const llvm::DenseMap<Operation *, StepPhase> &phases) {
  StepCost cost;
  for (const ScheduledOp &entry : schedule) {
    if (entry.stepInvariant)
      continue; // computed once, at load
    OpCost op = getOpCost(entry.op);
    cost.total += op;
    StepPhase phase = phases.lookup_or(entry.op, StepPhase::Optimizer);
    cost.phases[static_cast<unsigned>(phase)] += op;
  }
  return cost;
}

StepCost mlir::dtc::analyzeCost(func::FuncOp step) {
  return sumCosts(programOrder(step.getBody().front()),
                  classifyStepPhases(step));
}

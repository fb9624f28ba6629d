//===- Phases.cpp - forward, backward and optimizer parts of a step -------===//

#include "dtc/Analysis/Phases.h"

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"

using namespace mlir;
using namespace mlir::dtc;

StringRef mlir::dtc::getStepPhaseName(StepPhase phase) {
  switch (phase) {
  case StepPhase::Forward:
    return "forward";
  case StepPhase::Backward:
    return "backward";
  case StepPhase::Optimizer:
    return "optimizer";
  }
  llvm_unreachable("unknown step phase");
}

/// Marks `phase` on every op of `roots`' backward slice that has none yet.
static void markSlice(SmallVector<Value> roots, StepPhase phase,
                      llvm::DenseMap<Operation *, StepPhase> &phases) {
  while (!roots.empty()) {
    Operation *def = roots.pop_back_val().getDefiningOp();
    if (def && phases.try_emplace(def, phase).second)
      llvm::append_range(roots, def->getOperands());
  }
}

llvm::DenseMap<Operation *, StepPhase>
mlir::dtc::classifyStepPhases(func::FuncOp step) {
  Operation *terminator = step.getBody().front().getTerminator();
  SmallVector<Value> loss, outputs, grads;
  std::optional<unsigned> lossResult = getLossResult(step);
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    Value value = terminator->getOperand(i);
    if (lossResult == i)
      loss.push_back(value);
    else if (step.getResultAttr(i, kOutputAttrName))
      outputs.push_back(value);
    if (step.getResultAttr(i, kGradAttrName))
      grads.push_back(value);
  }
  llvm::DenseMap<Operation *, StepPhase> phases;
  markSlice(loss.empty() ? outputs : loss, StepPhase::Forward, phases);
  markSlice(grads, StepPhase::Backward, phases);
  for (Operation &op : step.getBody().front().without_terminator())
    phases.try_emplace(&op, StepPhase::Optimizer);
  return phases;
}

llvm::DenseSet<Value> mlir::dtc::getBatchDependentValues(func::FuncOp func) {
  llvm::DenseSet<Value> dependent;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), kInputAttrName))
      dependent.insert(arg);
  func.walk([&](Operation *op) {
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return dependent.contains(v); }))
      dependent.insert(op->getResults().begin(), op->getResults().end());
  });
  return dependent;
}

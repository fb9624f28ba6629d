//===- Liveness.cpp - bytes live while a step runs ------------------------===//

#include "dtc/Analysis/Liveness.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {
/// A value as one instance of its op computed it.
using ValueInstance = std::pair<Value, unsigned>;
} // namespace

/// Whether `op` computes the same values at every step, given that its
/// operands do: a pure dtc op (no collective, no random draw keyed on the
/// step, which take operands anyway).
static bool isStepInvariant(Operation &op,
                            const llvm::DenseSet<Operation *> &invariant) {
  if (!isa<DTCDialect>(op.getDialect()) || !isPure(&op) ||
      isa<CollectiveOpInterface>(op) || op.getNumRegions())
    return false;
  return llvm::all_of(op.getOperands(), [&](Value operand) {
    Operation *def = operand.getDefiningOp();
    return def && invariant.contains(def);
  });
}

Schedule mlir::dtc::programOrder(Block &block) {
  Schedule invariantOps, stepOps;
  llvm::DenseSet<Operation *> invariant;
  for (Operation &op : block.without_terminator()) {
    if (isStepInvariant(op, invariant)) {
      invariant.insert(&op);
      invariantOps.push_back(ScheduledOp{&op, 0, {}, /*stepInvariant=*/true});
    } else {
      stepOps.push_back(ScheduledOp{&op, 0, {}});
    }
  }
  llvm::append_range(invariantOps, stepOps);
  return invariantOps;
}

MemoryTimeline mlir::dtc::computeLiveness(ArrayRef<ScheduledOp> schedule,
                                          function_ref<bool(Value)> counted) {
  // Which value instance each entry reads, and the last entry reading each.
  std::vector<SmallVector<ValueInstance, 4>> reads(schedule.size());
  llvm::DenseMap<ValueInstance, size_t> lastRead;
  llvm::DenseSet<ValueInstance> computed;
  llvm::DenseMap<Value, unsigned> latest;
  for (auto [index, entry] : llvm::enumerate(schedule)) {
    for (auto [i, operand] : llvm::enumerate(entry.op->getOperands())) {
      unsigned instance;
      if (i < entry.operandInstances.size())
        instance = entry.operandInstances[i];
      else if (computed.contains({operand, entry.instance}))
        instance = entry.instance;
      else if (auto it = latest.find(operand); it != latest.end())
        instance = it->second;
      else
        continue; // an argument, or computed outside the schedule
      reads[index].push_back({operand, instance});
      lastRead[{operand, instance}] = index;
    }
    for (Value result : entry.op->getResults()) {
      computed.insert({result, entry.instance});
      latest[result] = entry.instance;
    }
  }

  MemoryTimeline timeline;
  int64_t live = 0;
  llvm::DenseSet<ValueInstance> allocated;
  for (auto [index, entry] : llvm::enumerate(schedule)) {
    for (Value result : entry.op->getResults())
      if (counted(result) && allocated.insert({result, entry.instance}).second)
        live += tensorByteSize(result.getType());
    timeline.live.push_back(live);
    if (timeline.peakIndex < 0 || live > timeline.peak) {
      timeline.peak = live;
      timeline.peakIndex = index;
    }
    auto free = [&](ValueInstance value) {
      if (allocated.erase(value))
        live -= tensorByteSize(value.first.getType());
    };
    for (Value result : entry.op->getResults())
      if (!lastRead.contains({result, entry.instance}))
        free({result, entry.instance});
    for (ValueInstance read : reads[index])
      if (lastRead.lookup(read) == index)
        free(read);
  }
  return timeline;
}

int64_t mlir::dtc::activationPeak(func::FuncOp step,
                                  ArrayRef<ScheduledOp> schedule) {
  Operation *terminator = step.getBody().front().getTerminator();
  llvm::DenseSet<Value> results(terminator->operand_begin(),
                                terminator->operand_end());
  return computeLiveness(schedule,
                         [&](Value v) {
                           return !isa<BlockArgument>(v) &&
                                  !results.contains(v);
                         })
      .peak;
}

int64_t mlir::dtc::activationPeak(func::FuncOp step) {
  return activationPeak(step, programOrder(step.getBody().front()));
}

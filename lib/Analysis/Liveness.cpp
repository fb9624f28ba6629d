//===- Liveness.cpp - bytes live while a step runs ------------------------===//

#include "dtc/Analysis/Liveness.h"

#include "dtc/Analysis/PipelineRanks.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <memory>

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

std::vector<LiveBuffer>
mlir::dtc::computeLiveBuffers(ArrayRef<ScheduledOp> schedule,
                              function_ref<bool(Value)> counted) {
  // The last entry reading each value instance: an entry reads the
  // instance its operandInstances name, else its own if computed, else the
  // latest.
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
      lastRead[{operand, instance}] = index;
    }
    for (Value result : entry.op->getResults()) {
      computed.insert({result, entry.instance});
      latest[result] = entry.instance;
    }
  }
  std::vector<LiveBuffer> buffers;
  llvm::DenseSet<ValueInstance> allocated;
  for (auto [index, entry] : llvm::enumerate(schedule))
    for (Value result : entry.op->getResults())
      if (counted(result) && allocated.insert({result, entry.instance}).second)
        buffers.push_back(LiveBuffer{
            result, entry.instance, tensorByteSize(result.getType()), index,
            std::max(index, lastRead.lookup({result, entry.instance}))});
  return buffers;
}

MemoryTimeline
mlir::dtc::timelineOf(ArrayRef<LiveBuffer> buffers, size_t entries,
                      function_ref<int64_t(const LiveBuffer &)> bytesOf) {
  // Bytes allocated at each entry and freed after it.
  std::vector<int64_t> allocatedAt(entries), freedAfter(entries);
  for (const LiveBuffer &buffer : buffers) {
    allocatedAt[buffer.first] += bytesOf(buffer);
    freedAfter[buffer.last] += bytesOf(buffer);
  }
  MemoryTimeline timeline;
  int64_t live = 0;
  for (size_t index = 0; index < entries; ++index) {
    live += allocatedAt[index];
    timeline.live.push_back(live);
    if (timeline.peakIndex < 0 || live > timeline.peak) {
      timeline.peak = live;
      timeline.peakIndex = index;
    }
    live -= freedAfter[index];
  }
  return timeline;
}

MemoryTimeline mlir::dtc::computeLiveness(ArrayRef<ScheduledOp> schedule,
                                          function_ref<bool(Value)> counted) {
  return timelineOf(computeLiveBuffers(schedule, counted), schedule.size(),
                    [](const LiveBuffer &buffer) { return buffer.bytes; });
}

std::function<bool(Value)> mlir::dtc::intermediatesOf(func::FuncOp step) {
  Operation *terminator = step.getBody().front().getTerminator();
  auto results = std::make_shared<llvm::DenseSet<Value>>(
      terminator->operand_begin(), terminator->operand_end());
  return [results](Value v) {
    return !isa<BlockArgument>(v) && !results->contains(v);
  };
}

int64_t mlir::dtc::activationPeak(func::FuncOp step,
                                  ArrayRef<ScheduledOp> schedule) {
  return computeLiveness(schedule, intermediatesOf(step)).peak;
}

int64_t mlir::dtc::activationPeak(func::FuncOp step) {
  if (!getPipelineRanks(step))
    return activationPeak(step, programOrder(step.getBody().front()));
  int64_t peak = 0;
  for (const Schedule &order : pipelineRankOrders(step))
    peak = std::max(peak, activationPeak(step, order));
  return peak;
}

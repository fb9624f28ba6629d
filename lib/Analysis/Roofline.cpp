//===- Roofline.cpp - how long a step should take -------------------------===//

#include "dtc/Analysis/Roofline.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::dtc;

Type mlir::dtc::getComputeElementType(Operation *op) {
  for (ValueRange values :
       {ValueRange(op->getOperands()), ValueRange(op->getResults())})
    for (Value value : values)
      if (auto type = dyn_cast<RankedTensorType>(value.getType()))
        return type.getElementType();
  return Type();
}

OpTime mlir::dtc::getRooflineTime(const OpCost &cost, Type elementType,
                                  const DeviceSpec &device) {
  OpTime time;
  if (cost.flops() > 0) {
    const PeakFlops &peak = device.peak(elementType);
    time.computeSeconds =
        cost.matmulFlops / peak.matmul +
        (cost.elementwiseFlops + cost.transcendentalFlops) / peak.vector;
  }
  time.memorySeconds = cost.bytes() / device.memoryBytesPerSecond;
  return time;
}

OpTime mlir::dtc::getRooflineTime(Operation *op, const DeviceSpec &device) {
  return getRooflineTime(getOpCost(op), getComputeElementType(op), device);
}

const LinkSpec &mlir::dtc::getCollectiveLink(CollectiveOpInterface op,
                                             const DeviceSpec &device) {
  auto mesh =
      SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, op.getMeshAttr());
  if (!mesh)
    return device.intraNode;
  // The highest rank of the group of rank 0: every group axis at its last
  // coordinate, the others at 0.
  SmallVector<StringRef> groupAxes = op.getGroupAxes();
  ArrayRef<int64_t> sizes = mesh.getSizes();
  int64_t stride = 1, lastRank = 0;
  for (int64_t i = sizes.size() - 1; i >= 0; --i) {
    auto axis = cast<StringAttr>(mesh.getAxes()[i]).getValue();
    if (llvm::is_contained(groupAxes, axis))
      lastRank += (sizes[i] - 1) * stride;
    stride *= sizes[i];
  }
  return lastRank < device.devicesPerNode ? device.intraNode : device.interNode;
}

double mlir::dtc::getCollectiveSeconds(CollectiveOpInterface op,
                                       const DeviceSpec &device) {
  return getCollectiveLink(op, device)
      .seconds(op.getBusBytes(op.getGroupSize()));
}

StepTime mlir::dtc::estimateStepTime(
    ArrayRef<ScheduledOp> schedule,
    const llvm::DenseMap<Operation *, StepPhase> &phases,
    const DeviceSpec &device) {
  StepTime time;
  for (const ScheduledOp &entry : schedule) {
    if (entry.stepInvariant)
      continue; // computed once, at load
    double seconds;
    if (auto collective = dyn_cast<CollectiveOpInterface>(entry.op)) {
      seconds = getCollectiveSeconds(collective, device);
      time.collectiveSeconds += seconds;
    } else {
      OpTime op = getRooflineTime(entry.op, device);
      seconds = op.seconds();
      if (seconds == 0)
        continue;
      time.computeSeconds += op.computeSeconds;
      time.memorySeconds += op.memorySeconds;
      time.opSeconds += seconds;
      ++(op.isComputeBound() ? time.computeBoundOps : time.memoryBoundOps);
    }
    StepPhase phase = phases.lookup_or(entry.op, StepPhase::Optimizer);
    time.phaseSeconds[static_cast<unsigned>(phase)] += seconds;
  }
  return time;
}

StepTime mlir::dtc::estimateStepTime(func::FuncOp step,
                                     const DeviceSpec &device) {
  return estimateStepTime(programOrder(step.getBody().front()),
                          classifyStepPhases(step), device);
}

//===- Collectives.cpp - what a step sends --------------------------------===//

#include "dtc/Analysis/Collectives.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"

using namespace mlir;
using namespace mlir::dtc;

static void addCall(StepCollectives &result, CollectiveOpInterface op) {
  CollectiveCall call;
  call.op = op;
  // (A pipelined step's broadcast to some ranks goes point to point.)
  call.kind = op->hasAttr(kReceiversAttrName) ? "send_recv"
                                              : op.getCollectiveKind().str();
  for (StringRef axis : op.getGroupAxes())
    call.axes.push_back(axis.str());
  call.groupSize = op.getGroupSize();
  call.busBytes = op.getBusBytes(call.groupSize);
  if (StringAttr reason = op.getReasonAttr())
    call.reason = reason.str();
  call.resharding = op->hasAttr(kReshardingAttrName);
  for (CollectiveTotal *total :
       {&result.totals[call.kind],
        call.resharding ? &result.resharding : nullptr}) {
    if (!total)
      continue;
    ++total->calls;
    total->busBytes += call.busBytes;
  }
  result.calls.push_back(std::move(call));
}

StepCollectives mlir::dtc::analyzeCollectives(func::FuncOp step) {
  StepCollectives result;
  step.walk([&](CollectiveOpInterface op) { addCall(result, op); });
  return result;
}

StepCollectives mlir::dtc::analyzeCollectives(ArrayRef<ScheduledOp> schedule) {
  StepCollectives result;
  for (const ScheduledOp &entry : schedule)
    if (auto op = dyn_cast<CollectiveOpInterface>(entry.op))
      addCall(result, op);
  return result;
}

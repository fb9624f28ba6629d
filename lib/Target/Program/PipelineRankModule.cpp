//===- PipelineRankModule.cpp - one pp rank's part of a pipelined step ----===//
//
// A pipelined step is one program for every rank, which the reference
// executor filters as it runs (pipelineRankOrders). A compiled rank runs a
// program of its own: the step with only the ops its pp coordinate runs.
// Its arguments and results stay the step's (one signature for every
// rank); what another coordinate holds is bound to nothing here.
//
//===----------------------------------------------------------------------===//

#include "dtc/Target/Program/BuildProgram.h"

#include "dtc/Analysis/PipelineRanks.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dtc;

FailureOr<OwningOpRef<ModuleOp>>
mlir::dtc::pipelineRankModule(func::FuncOp original, int64_t coordinate) {
  OwningOpRef<ModuleOp> module(original->getParentOfType<ModuleOp>().clone());
  auto step = module->lookupSymbol<func::FuncOp>(original.getSymName());
  std::vector<Schedule> orders = pipelineRankOrders(step);
  if (coordinate < 0 || coordinate >= static_cast<int64_t>(orders.size()))
    return original.emitError("pipeline: no pp coordinate ") << coordinate;
  PipelineHolders holders = getPipelineHolders(step);
  llvm::DenseSet<Operation *> runs;
  for (const ScheduledOp &entry : orders[coordinate])
    runs.insert(entry.op);
  Block &body = step.getBody().front();
  OpBuilder b(step.getContext());

  // A result another coordinate holds returns an argument this one does
  // not hold either: an update its own argument (the pair keeps one type),
  // a gradient any such argument (its parameter's, at the least), whose
  // type the function's result then takes. The program names results by
  // index and gives this one no buffer.
  Operation *terminator = body.getTerminator();
  llvm::DenseMap<unsigned, BlockArgument> updated;
  for (BlockArgument arg : step.getArguments())
    if (std::optional<unsigned> result =
            getAliasingOutput(step, arg.getArgNumber()))
      updated[*result] = arg;
  for (OpOperand &result : terminator->getOpOperands()) {
    unsigned index = result.getOperandNumber();
    if (holders.holdsResult(index, coordinate))
      continue;
    BlockArgument standIn = updated.lookup(index);
    for (BlockArgument arg : step.getArguments())
      if (!standIn && !holders.holdsArgument(arg.getArgNumber(), coordinate))
        standIn = arg;
    if (!standIn)
      return step.emitError("pipeline: result ")
             << index << " is held by other pp ranks, but pp coordinate "
             << coordinate << " holds every argument";
    result.set(standIn);
  }
  step.setType(FunctionType::get(step.getContext(), step.getArgumentTypes(),
                                 terminator->getOperandTypes()));
  // A broadcast this coordinate receives: zeros in place of the value.
  for (const ScheduledOp &entry : orders[coordinate]) {
    auto broadcast = dyn_cast<CollectiveBroadcastOp>(entry.op);
    Operation *def =
        broadcast ? broadcast.getOperand().getDefiningOp() : nullptr;
    if (!def || runs.contains(def))
      continue;
    auto type = cast<RankedTensorType>(broadcast.getType());
    b.setInsertionPoint(broadcast);
    Value zeros = ConstantOp::create(
        b, broadcast.getLoc(),
        DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
    broadcast->setOperand(0, zeros);
    runs.insert(zeros.getDefiningOp());
  }
  // The rest goes, readers first.
  SmallVector<Operation *> rest;
  for (Operation &op : body.without_terminator())
    if (!runs.contains(&op))
      rest.push_back(&op);
  for (Operation *op : llvm::reverse(rest)) {
    if (!op->use_empty())
      return op->emitError("pipeline: pp coordinate ")
             << coordinate << " reads what this op computes without running "
             << "it or receiving it";
    op->erase();
  }
  step->setAttr(kPipelineCoordinateAttr, b.getI64IntegerAttr(coordinate));
  return module;
}

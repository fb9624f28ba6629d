//===- PipelineRanks.cpp - what one pp rank of a pipelined step runs ------===//

#include "dtc/Analysis/PipelineRanks.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dtc;

int64_t PipelineInfo::getRanks() const {
  return stageRanks.empty()
             ? 0
             : *std::max_element(stageRanks.begin(), stageRanks.end()) + 1;
}

std::optional<PipelineInfo> mlir::dtc::getPipelineInfo(func::FuncOp step) {
  auto attr = step->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
  if (!attr)
    return std::nullopt;
  PipelineInfo info;
  bool complete = true;
  auto text = [&](StringRef key, std::string &out) {
    auto value = attr.getAs<StringAttr>(key);
    complete &= static_cast<bool>(value);
    if (value)
      out = value.str();
  };
  auto integer = [&](StringRef key, int64_t &out) {
    auto value = attr.getAs<IntegerAttr>(key);
    complete &= static_cast<bool>(value);
    if (value)
      out = value.getInt();
  };
  auto integers = [&](StringRef key, std::vector<int64_t> &out) {
    auto value = attr.getAs<DenseI64ArrayAttr>(key);
    complete &= static_cast<bool>(value);
    if (value)
      out.assign(value.asArrayRef().begin(), value.asArrayRef().end());
  };
  auto reals = [&](StringRef key, std::vector<double> &out) {
    auto value = attr.getAs<DenseF64ArrayAttr>(key);
    complete &= static_cast<bool>(value);
    if (value)
      out.assign(value.asArrayRef().begin(), value.asArrayRef().end());
  };
  text("axis", info.axis);
  text("schedule", info.schedule);
  integer("microbatches", info.microbatches);
  integer("virtual_stages", info.virtualStages);
  integers("stage_ranks", info.stageRanks);
  integers("activation_bytes", info.activationBytes);
  integers("sent_bytes", info.sentBytes);
  integers("layers", info.layers);
  reals("forward_seconds", info.forwardSeconds);
  reals("backward_input_seconds", info.backwardInputSeconds);
  reals("backward_weight_seconds", info.backwardWeightSeconds);
  if (!complete || info.stageRanks.empty())
    return std::nullopt;
  return info;
}

int64_t mlir::dtc::getPipelineRanks(func::FuncOp step) {
  std::optional<PipelineInfo> info = getPipelineInfo(step);
  return info ? info->getRanks() : 0;
}

static bool holds(ArrayRef<int64_t> holders, int64_t coordinate) {
  return holders.empty() || llvm::is_contained(holders, coordinate);
}

bool PipelineHolders::holdsArgument(unsigned index, int64_t coordinate) const {
  return index >= arguments.size() || holds(arguments[index], coordinate);
}

bool PipelineHolders::holdsResult(unsigned index, int64_t coordinate) const {
  return index >= results.size() || holds(results[index], coordinate);
}

PipelineHolders mlir::dtc::getPipelineHolders(func::FuncOp step) {
  PipelineHolders holders;
  holders.arguments.resize(step.getNumArguments());
  holders.results.resize(step.getNumResults());
  // (A function that is no consistent training step: the attributes
  // themselves, and every rank holds its results.)
  FailureOr<TrainingStep> view = failure();
  if (getStepAttr(step)) {
    ScopedDiagnosticHandler quiet(step.getContext(),
                                  [](Diagnostic &) { return success(); });
    view = TrainingStep::get(step);
  }
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i)
    if (succeeded(view))
      holders.arguments[i] = view->getArgumentPipelineRanks(i);
    else if (auto ranks = step.getArgAttrOfType<DenseI64ArrayAttr>(
                 i, kPipelineRanksAttrName))
      holders.arguments[i].assign(ranks.asArrayRef().begin(),
                                  ranks.asArrayRef().end());
  if (succeeded(view))
    for (unsigned r = 0, e = step.getNumResults(); r < e; ++r)
      holders.results[r] = view->getResultPipelineRanks(r);
  return holders;
}

/// Whether the ranks at `coordinate` take part in a pp broadcast: all, or
/// its root and receivers.
static bool takesPart(CollectiveBroadcastOp broadcast, int64_t coordinate) {
  auto receivers =
      broadcast->getAttrOfType<DenseI64ArrayAttr>(kReceiversAttrName);
  return !receivers ||
         static_cast<int64_t>(broadcast.getRoot()) == coordinate ||
         llvm::is_contained(receivers.asArrayRef(), coordinate);
}

std::vector<Schedule> mlir::dtc::pipelineRankOrders(func::FuncOp step) {
  std::optional<PipelineInfo> info = getPipelineInfo(step);
  if (!info)
    return {};
  ArrayRef<int64_t> stageRanks = info->stageRanks;
  std::vector<Schedule> orders(info->getRanks());
  PipelineHolders holders = getPipelineHolders(step);
  // Per coordinate, the ops it does not run.
  std::vector<llvm::DenseSet<Operation *>> skipped(orders.size());
  for (const ScheduledOp &entry : programOrder(step.getBody().front())) {
    Operation *op = entry.op;
    auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName);
    for (int64_t coordinate = 0, e = orders.size(); coordinate < e;
         ++coordinate) {
      auto held = [&](Value value) {
        if (auto arg = dyn_cast<BlockArgument>(value))
          return holders.holdsArgument(arg.getArgNumber(), coordinate);
        return !skipped[coordinate].contains(value.getDefiningOp());
      };
      auto broadcast = dyn_cast<CollectiveBroadcastOp>(op);
      bool runs = stage       ? stageRanks[stage.getInt()] == coordinate
                  : broadcast ? takesPart(broadcast, coordinate)
                              : llvm::all_of(op->getOperands(), held);
      if (runs)
        orders[coordinate].push_back(entry);
      else
        skipped[coordinate].insert(op);
    }
  }
  return orders;
}

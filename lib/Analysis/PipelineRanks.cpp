//===- PipelineRanks.cpp - what one pp rank of a pipelined step runs ------===//

#include "dtc/Analysis/PipelineRanks.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/PipelineStages.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dtc;

static DenseI64ArrayAttr getStageRanks(func::FuncOp step) {
  auto pipeline = step->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
  return pipeline ? pipeline.getAs<DenseI64ArrayAttr>("stage_ranks")
                  : DenseI64ArrayAttr();
}

int64_t mlir::dtc::getPipelineRanks(func::FuncOp step) {
  DenseI64ArrayAttr stageRanks = getStageRanks(step);
  if (!stageRanks || stageRanks.empty())
    return 0;
  ArrayRef<int64_t> ranks = stageRanks.asArrayRef();
  return *std::max_element(ranks.begin(), ranks.end()) + 1;
}

std::vector<Schedule> mlir::dtc::pipelineRankOrders(func::FuncOp step) {
  ArrayRef<int64_t> stageRanks = getStageRanks(step).asArrayRef();
  std::vector<Schedule> orders(getPipelineRanks(step));
  // Per coordinate, the ops it does not run.
  std::vector<llvm::DenseSet<Operation *>> skipped(orders.size());
  for (const ScheduledOp &entry : programOrder(step.getBody().front())) {
    Operation *op = entry.op;
    auto stage = op->getAttrOfType<IntegerAttr>(kStageAttrName);
    for (size_t coordinate = 0; coordinate < orders.size(); ++coordinate) {
      auto held = [&](Value value) {
        Operation *def = value.getDefiningOp();
        return !def || !skipped[coordinate].contains(def);
      };
      bool runs =
          stage ? stageRanks[stage.getInt()] == static_cast<int64_t>(coordinate)
                : isa<CollectiveBroadcastOp>(op) ||
                      llvm::all_of(op->getOperands(), held);
      if (runs)
        orders[coordinate].push_back(entry);
      else
        skipped[coordinate].insert(op);
    }
  }
  return orders;
}

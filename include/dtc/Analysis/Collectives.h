//===- Collectives.h - what a step sends ------------------------*- C++ -*-===//
//
// Every collective a rank's step runs, read through CollectiveOpInterface:
// its kind, group, bus bytes (nccl-tests' convention, what the runtime's
// Communicator counts) and reason, and the totals per kind.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_COLLECTIVES_H
#define DTC_ANALYSIS_COLLECTIVES_H

#include "dtc/Analysis/Liveness.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::dtc {

/// One call of a collective per step.
struct CollectiveCall {
  Operation *op = nullptr;
  /// `all_reduce`, `all_gather`, ... as the Communicator counts them.
  std::string kind;
  std::vector<std::string> axes;
  /// Ranks in the group; -1 when the mesh or an axis does not exist.
  int64_t groupSize = 0;
  double busBytes = 0;
  /// Why the collective is there; empty when it does not say.
  std::string reason;
  /// A partitioner inserted it where an op could not run on its operands'
  /// layouts (kReshardingAttrName).
  bool resharding = false;
};

struct CollectiveTotal {
  int64_t calls = 0;
  double busBytes = 0;
};

struct StepCollectives {
  /// In the order a walk of the step meets them.
  std::vector<CollectiveCall> calls;
  /// By kind, in the order of the kinds' names.
  std::map<std::string, CollectiveTotal> totals;
  /// Of the reshardings.
  CollectiveTotal resharding;
};

StepCollectives analyzeCollectives(func::FuncOp step);
/// Those `schedule` runs (one pp rank's of a pipelined step), in its order.
StepCollectives analyzeCollectives(llvm::ArrayRef<ScheduledOp> schedule);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_COLLECTIVES_H

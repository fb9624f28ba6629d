//===- PipelineRanks.h - what one pp rank of a pipelined step runs -*- C++
//-*-===//
//
// A pipelined step is one program for every rank (PipelineStages.h): the
// memory, FLOPs and time of a rank are those of the ops its pp coordinate
// runs, not the whole program's.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_PIPELINERANKS_H
#define DTC_ANALYSIS_PIPELINERANKS_H

#include "dtc/Analysis/Liveness.h"

#include <optional>
#include <string>

namespace mlir::dtc {

/// A pipelined step's dtc.pipeline attribute (PipelineStages.h), read.
struct PipelineInfo {
  std::string axis, schedule;
  int64_t microbatches = 1, virtualStages = 1;
  /// Per global stage.
  std::vector<int64_t> stageRanks, activationBytes, sentBytes, layers;
  std::vector<double> forwardSeconds, backwardInputSeconds,
      backwardWeightSeconds;

  /// The ranks along `axis`.
  int64_t getRanks() const;
};

/// Null for a step without pipeline stages (or a malformed attribute).
std::optional<PipelineInfo> getPipelineInfo(func::FuncOp step);

/// The ranks along the pp axis of a pipelined step; 0 for a step without
/// pipeline stages.
int64_t getPipelineRanks(func::FuncOp step);

/// Per argument and per result of a pipelined step, the pp coordinates
/// that hold it: a parameter's `dtc.pp_ranks`, its state's, gradient's and
/// update's the same (TrainingStep). Empty: every one.
struct PipelineHolders {
  std::vector<SmallVector<int64_t>> arguments, results;

  bool holdsArgument(unsigned index, int64_t coordinate) const;
  bool holdsResult(unsigned index, int64_t coordinate) const;
};
PipelineHolders getPipelineHolders(func::FuncOp step);

/// What the ranks at each coordinate along a pipelined step's pp axis run,
/// in program order: the ops of their stages, the ops of no stage whose
/// operands they hold (arguments as getPipelineHolders says), and the
/// broadcasts over pp they send or receive (every one without
/// dtc.receivers). The reference executor's rule.
std::vector<Schedule> pipelineRankOrders(func::FuncOp step);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_PIPELINERANKS_H

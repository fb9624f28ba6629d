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

namespace mlir::dtc {

/// The ranks along the pp axis of a pipelined step; 0 for a step without
/// pipeline stages.
int64_t getPipelineRanks(func::FuncOp step);

/// What the ranks at each coordinate along a pipelined step's pp axis run,
/// in program order: the ops of their stages, the ops of no stage whose
/// operands they hold, and every broadcast over pp (the root sends, the
/// others receive). The reference executor's rule.
std::vector<Schedule> pipelineRankOrders(func::FuncOp step);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_PIPELINERANKS_H

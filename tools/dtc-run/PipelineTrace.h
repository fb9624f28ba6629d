//===- PipelineTrace.h - a pipelined step's measured timeline ---*- C++ -*-===//
//
// dtc-run --trace: the fragments of a pipelined step as the ranks ran them,
// beside what the schedule simulator predicts from their measured times.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TOOLS_DTC_RUN_PIPELINETRACE_H
#define DTC_TOOLS_DTC_RUN_PIPELINETRACE_H

#include "dtc/Interpreter/Interpreter.h"
#include "dtc/Runtime/Communicator.h"

#include <string>
#include <vector>

namespace mlir::dtc {

/// Collective over the mesh: every rank's fragment spans (of its last step)
/// go to rank 0, which writes the measured timeline to `path` as a Chrome
/// trace (one track per pp rank) and prints the measured bubble of each pp
/// rank beside the one the schedule simulator predicts from the measured
/// mean time of each stage's fragments. Returns "" or what is wrong.
std::string reportMeasuredPipeline(func::FuncOp step,
                                   const std::vector<FragmentSpan> &spans,
                                   Communicator &comm, const std::string &path);

} // namespace mlir::dtc

#endif // DTC_TOOLS_DTC_RUN_PIPELINETRACE_H

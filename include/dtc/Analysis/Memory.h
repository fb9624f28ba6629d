//===- Memory.h - the bytes a rank holds for a step -------------*- C++ -*-===//
//
// Memory per rank by category: what the step's arguments and gradient
// results hold for the whole run (parameters, gradients, master weights,
// optimizer state) and the peak of its intermediate values (Liveness.h).
// The same numbers the reference executor measures, and what a planned
// arena will have to hold.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_MEMORY_H
#define DTC_ANALYSIS_MEMORY_H

#include "dtc/Analysis/Liveness.h"

namespace mlir::dtc {

/// Bytes per rank by category.
struct StepMemory {
  int64_t parameters = 0;
  /// The gradient buffer: ZeRO stage 1 keeps it whole although the step
  /// returns a shard, stage 2 only the shard.
  int64_t gradients = 0;
  /// f32 copies of parameters stored in a narrower type.
  int64_t masterWeights = 0;
  /// Other optimizer state (moments, step counter, loss scale).
  int64_t optimizerState = 0;
  /// The most bytes of intermediate values live at once, and the first op
  /// at which they are (null for a step without ops).
  int64_t activationPeak = 0;
  Operation *peakOp = nullptr;

  int64_t total() const {
    return parameters + gradients + masterWeights + optimizerState +
           activationPeak;
  }
};

/// `step`'s memory per rank, its intermediates run in program order.
StepMemory analyzeMemory(func::FuncOp step);
/// The same, its intermediates run in `schedule`: those of the ranks at
/// `pipelineCoordinate` along a pipelined step's pp axis, which hold only
/// the parameters their stages read, with their gradients and state (-1:
/// every argument and result).
StepMemory analyzeMemory(func::FuncOp step, ArrayRef<ScheduledOp> schedule,
                         int64_t pipelineCoordinate = -1);

/// A size as --memory-limit reads it: "80GB" (10^9), "512MiB" (2^20),
/// "1e6" (bytes), in bytes; -1 if malformed.
double parseByteSize(llvm::StringRef text);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_MEMORY_H

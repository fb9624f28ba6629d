//===- Liveness.h - bytes live while a step runs ----------------*- C++ -*-===//
//
// How many bytes of values are live at each point of a step run in a given
// order, when each value is allocated by the op that computes it and freed
// after its last read, as the reference executor frees them. The order is a
// Schedule, a list of op instances: a block's program order is one (each op
// once), and so are the orders still to come, where one op runs several
// times: microbatches in flight in a pipeline stage (instance k of an op
// reads instance k of its operands), or an activation recomputed before its
// backward readers (a second instance that later readers name).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_LIVENESS_H
#define DTC_ANALYSIS_LIVENESS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <vector>

namespace mlir::dtc {

/// One execution of an op in a schedule.
struct ScheduledOp {
  Operation *op = nullptr;
  /// Tells apart the executions of one op (a microbatch, a recomputed copy);
  /// each (op, instance) runs at most once.
  unsigned instance = 0;
  /// The instance of each operand it reads. Empty: for each operand, the
  /// same instance as this one if that has run, else the latest that has.
  llvm::SmallVector<unsigned, 2> operandInstances;
  /// Computed from constants alone: the same at every step, so computed once
  /// when the step is loaded. It costs no time per step; its value is held
  /// from the step's start, as a constant's is.
  bool stepInvariant = false;
};

using Schedule = std::vector<ScheduledOp>;

/// The ops of `block`, terminator excluded, once each: first the
/// step-invariant ones (constants and the pure ops computing from them
/// alone, which compile-time folding leaves as ops when their values are
/// large), then the rest, in program order.
Schedule programOrder(Block &block);

/// The live bytes along a schedule.
struct MemoryTimeline {
  /// At each entry: the bytes live once it has allocated its results,
  /// before it frees anything (its high-water mark).
  std::vector<int64_t> live;
  int64_t peak = 0;
  /// The first entry at which `peak` is reached; -1 for an empty schedule.
  int64_t peakIndex = -1;
};

/// One instance of a value and the entries of a schedule it lives through:
/// allocated by `first`, which computes it, freed after `last`, the last
/// entry that reads it (`first` when none does).
struct LiveBuffer {
  Value value;
  unsigned instance = 0;
  int64_t bytes = 0;
  size_t first = 0, last = 0;
};

/// The buffers of the results of `schedule` for which `counted` holds, in
/// the order they are allocated.
std::vector<LiveBuffer>
computeLiveBuffers(llvm::ArrayRef<ScheduledOp> schedule,
                   llvm::function_ref<bool(Value)> counted);

/// The live bytes along a schedule of `entries` entries holding `buffers`,
/// each counted as `bytesOf` says (its bytes, or an arena's aligned slot).
MemoryTimeline
timelineOf(llvm::ArrayRef<LiveBuffer> buffers, size_t entries,
           llvm::function_ref<int64_t(const LiveBuffer &)> bytesOf);

/// Runs `schedule` counting the bytes of the results for which `counted`
/// holds: each is allocated when its instance is computed and freed after
/// the last entry that reads it (right away when none does).
MemoryTimeline computeLiveness(llvm::ArrayRef<ScheduledOp> schedule,
                               llvm::function_ref<bool(Value)> counted);

/// Tells `step`'s intermediate values: computed by an op and not returned
/// (arguments and results are parameters, gradients, state).
std::function<bool(Value)> intermediatesOf(func::FuncOp step);

/// The peak bytes of `step`'s intermediate values, computed by its ops and
/// not returned (arguments and results are parameters, gradients, state),
/// run in `schedule` (program order by default; a pipelined step's: the
/// highest of its pp ranks', PipelineRanks.h).
int64_t activationPeak(func::FuncOp step);
int64_t activationPeak(func::FuncOp step, llvm::ArrayRef<ScheduledOp> schedule);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_LIVENESS_H

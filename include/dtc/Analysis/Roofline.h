//===- Roofline.h - how long a step should take -----------------*- C++ -*-===//
//
// A roofline estimate per op and per step on a DeviceSpec, before anything
// runs: an op takes the longer of its compute time (its FLOPs at the
// device's peak for its element type) and its memory time (its bytes at the
// memory bandwidth); a collective takes alpha + bus bytes * beta on the
// link its group crosses. Unfused ops and no overlap of communication with
// computation: an upper bound that fusion and overlap lower, and a relative
// measure that pipeline stages can be balanced with.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_ROOFLINE_H
#define DTC_ANALYSIS_ROOFLINE_H

#include "dtc/Analysis/DeviceSpec.h"
#include "dtc/Analysis/Liveness.h"
#include "dtc/Analysis/Phases.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include <algorithm>
#include <array>

namespace mlir::dtc {

struct OpTime {
  double computeSeconds = 0;
  double memorySeconds = 0;

  double seconds() const { return std::max(computeSeconds, memorySeconds); }
  bool isComputeBound() const { return computeSeconds > memorySeconds; }
};

/// The element type `op` computes in: its first tensor operand's, else its
/// first tensor result's; null when it has neither.
Type getComputeElementType(Operation *op);

/// The roofline time of an op of `cost` computing in `elementType`: matmul
/// FLOPs at the matmul peak plus the other FLOPs at the vector peak, against
/// its bytes at the memory bandwidth.
OpTime getRooflineTime(const OpCost &cost, Type elementType,
                       const DeviceSpec &device);
/// The same for `op` (getOpCost, getComputeElementType).
OpTime getRooflineTime(Operation *op, const DeviceSpec &device);

/// The link `op`'s group crosses: within a node when the group of rank 0
/// (ranks laid out in mesh axis order, the last axis fastest) lies within
/// the first `devicesPerNode` ranks.
const LinkSpec &getCollectiveLink(CollectiveOpInterface op,
                                  const DeviceSpec &device);
/// alpha + bus bytes * beta of one call of `op`.
double getCollectiveSeconds(CollectiveOpInterface op, const DeviceSpec &device);

/// A step's estimate: the ops' roofline times and the collectives' times,
/// summed.
struct StepTime {
  /// Over the ops that are not collectives.
  double computeSeconds = 0;
  double memorySeconds = 0;
  /// Sum of each op's max(compute, memory).
  double opSeconds = 0;
  int64_t computeBoundOps = 0;
  int64_t memoryBoundOps = 0;
  double collectiveSeconds = 0;
  /// Ops and collectives per phase.
  std::array<double, kNumStepPhases> phaseSeconds{};

  /// Without overlap of communication and computation.
  double seconds() const { return opSeconds + collectiveSeconds; }
};

StepTime estimateStepTime(llvm::ArrayRef<ScheduledOp> schedule,
                          const llvm::DenseMap<Operation *, StepPhase> &phases,
                          const DeviceSpec &device);
/// `step` run once in program order.
StepTime estimateStepTime(func::FuncOp step, const DeviceSpec &device);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_ROOFLINE_H

//===- ArenaPlan.h - one static arena for a step's values -------*- C++ -*-===//
//
// The memory plan of a compiled step: every intermediate value gets an
// offset in one arena per rank, fixed at compile time, so that no two
// values live at the same time overlap and nothing is allocated while the
// step runs. The arena can be no smaller than the most bytes live at once
// (the liveness lower bound); the plan places the largest buffers first,
// each in the smallest gap that fits among those already placed that live
// at the same time ("greedy by size", as TensorFlow Lite's planner).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_ANALYSIS_ARENAPLAN_H
#define DTC_ANALYSIS_ARENAPLAN_H

#include "dtc/Analysis/Liveness.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::dtc {

/// Every buffer starts at a multiple of this (a cache line, an AVX-512
/// vector).
constexpr int64_t kArenaAlignment = 64;

struct ArenaPlan {
  /// A buffer and its place: [offset, offset + bytes rounded up to the
  /// alignment).
  struct Slot {
    LiveBuffer buffer;
    int64_t offset = 0;
  };
  std::vector<Slot> slots;
  /// The arena's bytes.
  int64_t size = 0;
  /// The most bytes (each rounded up to the alignment) live at once.
  int64_t lowerBound = 0;
};

/// Places the buffers of `schedule`'s results for which `counted` holds;
/// a value in `heldUntil` lives at least through that entry (the operand of
/// a collective started without blocking, read until its wait).
ArenaPlan planArena(llvm::ArrayRef<ScheduledOp> schedule,
                    llvm::function_ref<bool(Value)> counted,
                    const llvm::DenseMap<Value, size_t> &heldUntil =
                        llvm::DenseMap<Value, size_t>());
/// Places `step`'s intermediate values, run in program order.
ArenaPlan planArena(func::FuncOp step);

/// Whether two slots that live at the same time overlap in the arena, or one
/// lies outside it: the plan's own check.
bool hasOverlap(const ArenaPlan &plan);

} // namespace mlir::dtc

#endif // DTC_ANALYSIS_ARENAPLAN_H

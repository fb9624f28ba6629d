//===- Schedule.h - pipeline schedules as data ------------------*- C++ -*-===//
//
// A pipeline schedule is an ordered list of actions per rank: the forward
// of one microbatch on one stage, its backward, or (zero-bubble schedules)
// the backward split into the input gradient, which the stage below waits
// for, and the weight gradient, which nobody waits for and so fills idle
// time. The global model is cut into S stages; rank r holds one (GPipe,
// 1F1B, ZB-H1), V spaced P apart (interleaved: stages r, r+P, ...) or two
// in a V (ZBV: stages r and 2P-1-r, so the first and the last stage share
// rank 0).
//
// Ranks exchange activations and gradients point to point as the runtime
// does: between two consecutive actions a rank posts the sends of the one
// before with the receives of the one after, and waits for all of them.
// `checkSchedule` runs that protocol under rendezvous semantics (a send
// completes only when its receiver has posted it) and names the ranks and
// messages of any deadlock. `simulateSchedule` times the lists from
// per-fragment costs.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_PIPELINE_SCHEDULE_H
#define DTC_TRANSFORMS_PIPELINE_SCHEDULE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::dtc::pipeline {

enum class ScheduleKind {
  GPipe,
  OneFOneB,
  Interleaved,
  ZeroBubbleH1,
  ZeroBubbleV
};

/// The spellings of `--pipeline-schedule`: gpipe, 1f1b, interleaved, zb-h1,
/// zbv.
std::optional<ScheduleKind> parseScheduleKind(llvm::StringRef name);
llvm::StringRef getScheduleName(ScheduleKind kind);

enum class ActionKind {
  Forward,
  /// Input and weight gradients together.
  Backward,
  /// The gradient the stage below waits for.
  BackwardInput,
  /// The weight gradients of a stage (after its BackwardInput).
  BackwardWeight,
};

/// "forward", "backward", "backward-input", "backward-weight" (an op's
/// dtc.fragment, a trace's category).
llvm::StringRef getActionKindName(ActionKind kind);
std::optional<ActionKind> parseActionKind(llvm::StringRef name);

/// One fragment instance: `kind` of microbatch `microbatch` on global stage
/// `stage`.
struct Action {
  ActionKind kind;
  int64_t stage;
  int64_t microbatch;

  bool operator==(const Action &other) const {
    return kind == other.kind && stage == other.stage &&
           microbatch == other.microbatch;
  }
};

/// "F3@s1" style name of an action (F, B, I, W: forward, backward, input
/// gradient, weight gradient; microbatch, then stage).
std::string getActionName(const Action &action);

struct Schedule {
  ScheduleKind kind = ScheduleKind::GPipe;
  int64_t ranks = 1;
  int64_t microbatches = 1;
  /// Model chunks a rank holds: V for interleaved, 2 for ZBV, else 1.
  int64_t stagesPerRank = 1;
  /// Per rank, in the order it runs them.
  std::vector<std::vector<Action>> actions;

  int64_t getNumStages() const { return ranks * stagesPerRank; }
  /// The rank that holds global stage `stage`.
  int64_t getRank(int64_t stage) const;
  /// Whether the backward is split into input and weight gradients (the
  /// zero-bubble schedules).
  bool splitsBackward() const {
    return kind == ScheduleKind::ZeroBubbleH1 ||
           kind == ScheduleKind::ZeroBubbleV;
  }
};

/// The fragment instances `action` reads, of its microbatch: a forward the
/// forward of the stage below; a backward (or input gradient) the forward
/// it differentiates and the gradient of the stage above; a weight gradient
/// the input gradient before it.
std::vector<Action> getReads(const Schedule &schedule, const Action &action);

/// Builds `kind`'s action lists for `ranks` ranks, `microbatches`
/// microbatches and `virtualStages` chunks per rank (interleaved only; ZBV
/// always has 2). Returns an error, and builds nothing, where the shape
/// does not suit the schedule.
std::string buildSchedule(ScheduleKind kind, int64_t ranks,
                          int64_t microbatches, int64_t virtualStages,
                          Schedule &schedule);
/// Reads --pipeline-split: "auto" (an empty `layersPerStage`), or the
/// transformer layers of each stage as counts ("7,8,8,7") or contiguous
/// ranges from layer 0 ("0-6,7-14,15-22,23-29"), into counts. Returns an
/// error or "".
std::string parsePipelineSplit(llvm::StringRef text,
                               std::vector<int64_t> &layersPerStage);

/// The same from what a pipelined step records: the schedule's name and
/// its chunks per rank (`virtual_stages`, which is ZBV's own 2 there).
std::string buildRecordedSchedule(llvm::StringRef name, int64_t ranks,
                                  int64_t microbatches, int64_t stagesPerRank,
                                  Schedule &schedule);

/// Checks that every fragment instance runs exactly once on its stage's
/// rank, after what it reads on that rank, and that the point-to-point
/// protocol completes under rendezvous semantics. Returns the first problem
/// found, or an empty string.
std::string checkSchedule(const Schedule &schedule);

/// Per stage (index = global stage) seconds of each fragment, the
/// activation bytes one microbatch keeps on it from its forward to its
/// backward input gradient, and the seconds of one point-to-point transfer.
/// `backward` is a Backward's time, `backwardInput` + `backwardWeight`
/// where the schedule splits it.
struct FragmentCosts {
  std::vector<double> forward, backwardInput, backwardWeight;
  std::vector<double> activationBytes;
  double transfer = 0;

  /// Every stage of `stages` costs `forward`, `backwardInput` and
  /// `backwardWeight` and keeps `activationBytes`.
  static FragmentCosts uniform(int64_t stages, double forward,
                               double backwardInput, double backwardWeight,
                               double activationBytes = 1);
};

struct TimedAction {
  Action action;
  double start = 0, end = 0;
};

struct Timeline {
  /// Per rank, in schedule order.
  std::vector<std::vector<TimedAction>> ranks;
  /// From the first action's start to the last one's end.
  double makespan = 0;
  /// Per rank: the seconds it computes, and the most activation bytes of
  /// microbatches between their forward and their input gradient it holds.
  std::vector<double> busy, peakActivationBytes;
  /// Per rank: the most weight gradients it has left for later (each keeps
  /// the inputs of its stage's weight gradient until it runs).
  std::vector<int64_t> peakDeferredWeights;
  /// Point-to-point transfers in one step (activations and gradients).
  int64_t transfers = 0;

  /// Idle time over total time on `rank`.
  double getBubbleFraction(int64_t rank) const;
  /// The largest of the ranks' bubble fractions.
  double getMaxBubbleFraction() const;
};

/// Times `schedule` (which must pass `checkSchedule`): every action starts
/// when its rank is free and what it reads has arrived.
Timeline simulateSchedule(const Schedule &schedule, const FragmentCosts &costs);

/// The timeline as a Chrome trace (one track per rank, times in
/// microseconds).
void writeChromeTrace(const Schedule &schedule, const Timeline &timeline,
                      llvm::raw_ostream &os);

} // namespace mlir::dtc::pipeline

#endif // DTC_TRANSFORMS_PIPELINE_SCHEDULE_H

//===- TrainingLoop.h - dtc-run's training mode -----------------*- C++ -*-===//
//
// Runs a training step built by dtc-compile for K steps on the reference
// executor. What goes in and comes out is the step ABI's business
// (StepBinding.h, shared with the compiled engines): each rank's part of
// the inputs and parameters, state started at zero, each step's updates
// fed back as the next step's arguments, whole tensors gathered for dumps.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TOOLS_DTC_RUN_TRAININGLOOP_H
#define DTC_TOOLS_DTC_RUN_TRAININGLOOP_H

#include "dtc/Dialect/DTC/IR/TrainingStep.h"

#include <string>

namespace mlir::dtc {

struct TrainingOptions {
  /// Model inputs and labels, as .npy named after the inputs (every step).
  std::string batchDir;
  /// Optional initial parameter values, as <encoded param name>.npy.
  std::string initDir;
  /// Where to write loss.npy, grad/<param>.npy and param/<param>.npy.
  std::string dumpDir;
  int64_t steps = 1;
  /// A progress line every this many steps (0: about ten lines in all).
  int64_t logEvery = 0;
  /// The activation peak dtc-compile planned (report.json), printed beside
  /// the measured one; -1 when there is no report.
  int64_t plannedPeak = -1;
};

class Communicator;

/// Trains `step`, described by `signature` (its getSignature()); returns
/// the process exit code (diagnostics already printed). With a
/// communicator (a step on a mesh) each rank runs its part, and rank 0
/// prints and dumps whole tensors.
int runTraining(const TrainingStep &step, const StepSignature &signature,
                const TrainingOptions &options, Communicator *comm = nullptr);

} // namespace mlir::dtc

#endif // DTC_TOOLS_DTC_RUN_TRAININGLOOP_H

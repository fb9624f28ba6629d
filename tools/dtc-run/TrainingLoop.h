//===- TrainingLoop.h - dtc-run's training mode -----------------*- C++ -*-===//
//
// Runs a training step built by dtc-compile for K steps on the reference
// executor, feeding each step's updated parameters and optimizer state
// (results marked dtc.update) back as the next step's arguments.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TOOLS_DTC_RUN_TRAININGLOOP_H
#define DTC_TOOLS_DTC_RUN_TRAININGLOOP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

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

/// Trains; returns the process exit code (diagnostics already printed).
/// With a communicator (a data-parallel step), each rank takes its share of
/// the batch along the first dimension of every input, and rank 0 prints
/// and dumps (the parameters and gradients are replicated).
int runTraining(func::FuncOp step, const TrainingOptions &options,
                Communicator *comm = nullptr);

} // namespace mlir::dtc

#endif // DTC_TOOLS_DTC_RUN_TRAININGLOOP_H

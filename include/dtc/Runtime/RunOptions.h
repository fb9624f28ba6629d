//===- RunOptions.h - the options of a training run -------------*- C++ -*-===//
//
// What `dtc-run OUT` (the reference executor) and `dtc-launch OUT` (a
// compiled program) are told about a training run: one parser, one help
// text and one range check for both, so that the two engines take the same
// options the same way.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_RUNOPTIONS_H
#define DTC_RUNTIME_RUNOPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::dtc {

struct RunOptions {
  /// Model inputs and labels, as .npy named after the inputs (every step).
  std::string batchDir;
  /// A flat token file each step's ids and labels are windows of
  /// (TokenData.h), how its raw elements are stored, and the seed of the
  /// windows' order.
  std::string dataPath;
  std::string dataType = "uint16";
  /// (Unset: 0, or a resumed run's checkpoint's.)
  std::optional<uint64_t> dataSeed;
  /// Checkpoints (Checkpoint.h): where to write them, every how many steps
  /// (0: at the end only), and the one to resume from.
  std::string saveDir;
  int64_t saveEvery = 0;
  std::string resumeDir;
  /// Evaluation: a token file (of --data-type) whose first evalBatches
  /// global batches of windows, in order, give the mean loss every
  /// evalEvery steps (0: after the last step only).
  std::string evalDataPath;
  int64_t evalEvery = 0;
  int64_t evalBatches = 4;
  /// Where to write the trained parameters as whole tensors under the
  /// model's names, and the ONNX model with them, after the last step.
  std::string exportDir;
  std::string exportONNXPath;
  /// Optional initial parameter values, as <encoded param name>.npy.
  std::string initDir;
  /// Seed of the values of parameters that neither initDir nor the
  /// compiled step give (a step compiled with --shapes-only).
  std::optional<uint64_t> initRandom;
  /// Where to write loss.npy, grad/<param>.npy and param/<param>.npy.
  std::string dumpDir;
  /// One JSON line per step (TrainingLoop.h says what it holds).
  std::string metricsPath;
  /// The step to train up to (resumed runs count from their checkpoint's).
  int64_t steps = 1;
  /// A progress line every this many steps (0: about ten lines in all).
  int64_t logEvery = 0;
  /// How long a rank may wait in one collective before the job ends.
  double collectiveTimeout = 300;
  /// One rank's peak FLOP/s in TFLOP/s, for the MFU in --metrics (0: none).
  double peakTflops = 0;

  // What dtc-compile wrote beside the step (readCompiledDir), if there:
  /// The ONNX model it compiled (manifest.json).
  std::string modelPath;
  /// The activation peak it planned, printed beside the measured one (-1:
  /// no report).
  int64_t plannedPeak = -1;
  /// A pipelined step's, per coordinate along pp (empty otherwise): a rank
  /// runs its stages' ops alone.
  std::vector<int64_t> plannedPeakPerPipelineRank;
  /// A rank's FLOPs per step, the mean over the pp ranks with pp (0: no
  /// report).
  double flopsPerStep = 0;
};

/// Reads the facts above from OUT/manifest.json and OUT/report.json.
void readCompiledDir(const std::string &out, RunOptions &options);

/// The help text of the options parseRunOptions takes.
extern const char *const kRunOptionsHelp;

/// Takes the run options out of `args` (argv without the program name) into
/// `options`, leaving the others in `rest` in order; checks each value's
/// range. Returns "" or the first problem, naming the option.
std::string parseRunOptions(const std::vector<std::string> &args,
                            RunOptions &options,
                            std::vector<std::string> &rest);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_RUNOPTIONS_H

//===- TrainingLoop.h - training with any engine ----------------*- C++ -*-===//
//
// What `dtc-run OUT` does around the training step, whatever engine runs
// the step itself (the reference executor, compiled CPU code): bind the
// first arguments (StepBinding.h), run K steps with the donated arguments
// taking their updates, print progress and the per-rank report, dump whole
// tensors. No MLIR or LLVM: the compiled program's launcher links it.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_TRAININGLOOP_H
#define DTC_RUNTIME_TRAININGLOOP_H

#include "dtc/Runtime/StepSignature.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::dtc {

/// Runs one rank's step. The loop gives it this rank's first arguments,
/// then asks for steps; between steps each donated argument holds its
/// update.
class StepEngine {
public:
  virtual ~StepEngine();
  /// Takes this rank's first arguments (by index). Returns "" or what is
  /// wrong.
  virtual std::string start(std::vector<Tensor> arguments) = 0;
  /// Runs one step; false after printing what failed.
  virtual bool step() = 0;
  /// Replaces this rank's input argument `index` (the next batch) by
  /// `part`, of its type. Returns "" or what is wrong.
  virtual std::string setInput(size_t index, const Tensor &part) = 0;
  /// This rank's current argument / last result `index`.
  virtual Tensor argument(size_t index) const = 0;
  virtual Tensor result(size_t index) const = 0;
  /// The most bytes of intermediate values live at once in a step so far.
  virtual int64_t peakIntermediateBytes() const = 0;
};

struct TrainingOptions {
  /// Model inputs and labels, as .npy named after the inputs (every step).
  std::string batchDir;
  /// A flat token file each step's ids and labels are windows of
  /// (TokenData.h), how its raw elements are stored, and the seed of the
  /// windows' order.
  std::string dataPath;
  std::string dataType = "uint16";
  uint64_t dataSeed = 0;
  /// Checkpoints (Checkpoint.h): where to write them, every how many steps
  /// (0: at the end only), and the one to resume from.
  std::string saveDir;
  int64_t saveEvery = 0;
  std::string resumeDir;
  /// Optional initial parameter values, as <encoded param name>.npy.
  std::string initDir;
  /// Where to write loss.npy, grad/<param>.npy and param/<param>.npy.
  std::string dumpDir;
  /// The step to train up to (resumed runs count from their checkpoint's).
  int64_t steps = 1;
  /// A progress line every this many steps (0: about ten lines in all).
  int64_t logEvery = 0;
  /// The activation peak dtc-compile planned (report.json), printed beside
  /// the measured one; -1 when there is no report.
  int64_t plannedPeak = -1;
};

/// The starting value the compiled step carries for argument `index` (a
/// parameter's initializer, the loss scale's start), if any.
using BuiltinValue = std::function<std::optional<Tensor>(size_t index)>;

/// Reads a directory of tensors (.npy, or ONNX .pb where the caller can
/// read them) into `out` by name; false with `error` set.
using TensorDirReader =
    std::function<bool(const std::string &dir,
                       std::map<std::string, Tensor> &out, std::string &error)>;

/// Trains the step `signature` describes on `engine`; returns the process
/// exit code (diagnostics already printed). With a communicator (a step on
/// a mesh) each rank runs its part, and rank 0 prints and dumps whole
/// tensors.
int runTraining(const StepSignature &signature, const TrainingOptions &options,
                StepEngine &engine, const BuiltinValue &builtinValue,
                const TensorDirReader &readDir, Communicator *comm = nullptr);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_TRAININGLOOP_H

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

#include "dtc/Runtime/RunOptions.h"
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
  /// Replaces this rank's argument `index` (an input's next batch; state
  /// restored after an evaluation) by `part`, of its type. Returns "" or
  /// what is wrong.
  virtual std::string setArgument(size_t index, const Tensor &part) = 0;
  /// This rank's current argument / last result `index`.
  virtual Tensor argument(size_t index) const = 0;
  virtual Tensor result(size_t index) const = 0;
  /// The most bytes of intermediate values live at once in a step so far.
  virtual int64_t peakIntermediateBytes() const = 0;
  /// The seconds this rank's steps so far spent on collectives that no
  /// computation hid (running them, handing them to another thread,
  /// waiting for them); negative where not counted.
  virtual double exposedCommunicationSeconds() const { return -1; }
};

/// The starting value the compiled step carries for argument `index` (a
/// parameter's initializer, the loss scale's start), if any.
using BuiltinValue = std::function<std::optional<Tensor>(size_t index)>;

/// Reads a directory of tensors (.npy, or ONNX .pb where the caller can
/// read them) into `out` by name; false with `error` set.
using TensorDirReader =
    std::function<bool(const std::string &dir,
                       std::map<std::string, Tensor> &out, std::string &error)>;

/// Writes the ONNX model at `model` with the trained `parameters` to `out`
/// (ONNX/ModelExport.h, where the caller links protobuf); "" or what is
/// wrong.
using ModelWriter =
    std::function<std::string(const std::string &model, const std::string &out,
                              const std::map<std::string, Tensor> &parameters)>;

/// Trains the step `signature` describes on `engine`; returns the process
/// exit code (diagnostics already printed; kEveryRankFailed when every
/// rank stops at the same point). With a communicator (a step on a mesh)
/// each rank runs its part, and rank 0 prints and dumps whole tensors.
/// Besides training: evaluation (--eval-data), metrics, checkpoints and
/// exports as RunOptions.h describes; a non-finite loss stops the run,
/// naming the step and the first non-finite gradient or update (under
/// fp16 loss scaling, which skips such steps, 16 of them in a row).
int runTraining(const StepSignature &signature, const RunOptions &options,
                StepEngine &engine, const BuiltinValue &builtinValue,
                const TensorDirReader &readDir, const ModelWriter &writeModel,
                Communicator *comm = nullptr);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_TRAININGLOOP_H

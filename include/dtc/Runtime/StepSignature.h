//===- StepSignature.h - a training step's ABI in plain C++ -----*- C++ -*-===//
//
// What an engine needs to know to run a compiled training step, without
// MLIR: for every argument its role (model input, parameter, training
// state), element type and per-rank shape, how it is laid out over the
// mesh, its padding and which result is its next value; for every result
// the same; and the step's loss, microbatches, mesh, RNG and loss scaling.
// The compiler builds it from the step's attributes (TrainingStep.h,
// docs/StepABI.md); StepBinding.h binds it to tensors; it is what
// dtc-compile writes to manifest.json and what a checkpoint will record.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_STEPSIGNATURE_H
#define DTC_RUNTIME_STEPSIGNATURE_H

#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/Tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::dtc {

/// The output name (`dtc.output`) of the learning rate a training step used.
inline constexpr char kLearningRateOutputName[] = "learning_rate";
/// The output name of a mixture of experts' tokens per expert, [routers,
/// experts] (dtc-expert-load).
inline constexpr char kExpertTokensOutputName[] = "expert_tokens";
/// The output name of the (token, choice) pairs past each expert's buffer
/// of a sorted mixture, [mixtures, experts] (dtc-sort-experts): dropped,
/// so dtc-run stops on any.
inline constexpr char kExpertOverflowOutputName[] = "expert_overflow";
/// The op attribute marking that count in the forward, and the function
/// attribute recording the sorted buffers' bytes for the report.
inline constexpr char kExpertOverflowAttrName[] = "dtc.expert_overflow";
inline constexpr char kExpertBuffersAttrName[] = "dtc.expert_buffers";

/// The mesh axis of a pipelined step's stages.
inline constexpr char kPipelineAxisName[] = "pp";

/// The version of the step ABI this build writes and reads. Bump it with
/// any change a runner of the old version would misread (docs/StepABI.md).
inline constexpr int64_t kStepABIVersion = 1;

/// "" when `found` (a step's ABI version; none: the step has none) is the
/// one this build reads, else a message for `what` (the step's file) that
/// names both versions and says to recompile.
std::string checkStepABIVersion(std::optional<int64_t> found,
                                const std::string &what);

/// What a training-state argument holds (the IR's #dtc.state kinds).
enum class StepStateKind : uint8_t {
  Step,
  ExpAvg,
  ExpAvgSq,
  MomentumBuffer,
  Master,
  LossScale,
  GrowthTracker
};
/// As PyTorch and the IR spell it: "exp_avg", "master", "step", ...
const char *stepStateKindName(StepStateKind kind);

/// How a tensor is laid out over the mesh (a #dtc.sharding): per dimension
/// the axes it is split over, in split order, and the dimension's blocks
/// (chunk r of each block; empty: one each). No dimension split: every
/// rank holds all of it. In a pipelined step, the coordinates along its
/// pp axis whose ranks hold it (those whose stages read a parameter; its
/// state, gradient and update go with it); empty: every one.
struct TensorLayout {
  std::vector<std::vector<std::string>> dims;
  std::vector<int64_t> blocks;
  std::vector<int64_t> pipelineRanks;
  /// The dimension a padded tensor's `unpaddedRows` count along.
  int64_t paddedDim = 0;

  bool isSplit() const;
  int64_t blocksOf(size_t dim) const;
  /// Whether the ranks at pp coordinate `coordinate` hold it.
  bool heldAt(int64_t coordinate) const;
};

enum class ArgumentRole : uint8_t { Input, Parameter, State };
enum class ResultRole : uint8_t { Loss, Gradient, Update, Output };

struct StepArgument {
  ArgumentRole role = ArgumentRole::Input;
  /// The input's or parameter's name; for state its display name
  /// (`exp_avg/<param>`, `step`), for messages.
  std::string name;
  /// State: its kind, and the parameter it belongs to (or "").
  StepStateKind stateKind = StepStateKind::Step;
  std::string parameter;
  /// Parameters: whether the step trains it (a distillation teacher's
  /// are frozen).
  bool trainable = true;
  /// The element type and this rank's shape.
  DType dtype = DType::F32;
  Shape shape;
  TensorLayout layout;
  /// The rows of dimension `layout.paddedDim` that are real; the rest are
  /// zero padding.
  std::optional<int64_t> unpaddedRows;
  /// Donated: the result that is its next value.
  std::optional<size_t> aliasedResult;
  /// A labels input: the classes its values index (the logits' last
  /// dimension), so a runner can refuse a label outside them.
  std::optional<int64_t> classes;
};

struct StepResult {
  ResultRole role = ResultRole::Output;
  /// A gradient's parameter, an update's argument, an output's name;
  /// "loss" for the loss.
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  TensorLayout layout;
  std::optional<int64_t> unpaddedRows;
  /// An update: the argument it is the next value of.
  std::optional<size_t> updatedArgument;
};

struct StepSignature {
  int64_t abiVersion = kStepABIVersion;
  /// The function's name (e.g. `train_step`).
  std::string function;
  std::vector<StepArgument> arguments;
  std::vector<StepResult> results;
  size_t loss = 0;
  int64_t microbatches = 1;
  /// The mesh the per-rank program runs on; no axes: one device.
  MeshShape mesh;
  /// Dropout's Philox key and the argument holding its counter.
  struct Rng {
    int64_t seed = 0;
    size_t counter = 0;
  };
  std::optional<Rng> rng;
  /// fp16's dynamic loss scaling: finite steps before the scale doubles.
  std::optional<int64_t> growthInterval;
  /// The pipeline stage the function is; none: the whole step.
  std::optional<int64_t> stage;

  /// The state argument of `kind` belonging to `parameter` ("" for the
  /// step's own: `step`, `loss_scale`, `growth_tracker`).
  std::optional<size_t> stateArgument(StepStateKind kind,
                                      const std::string &parameter) const;
  /// The model output named `name`, if the step returns it.
  std::optional<size_t> outputResult(const std::string &name) const;
  /// Whether `rank` of the step's mesh holds a tensor laid out as
  /// `layout` (in a pipelined step, a parameter's pp coordinates hold it).
  bool heldBy(const TensorLayout &layout, int64_t rank) const;
  /// The same for this rank of `comm` (null: one device, which holds all).
  bool heldBy(const TensorLayout &layout, const Communicator *comm) const;
  /// The token ids: the first integer input, if any.
  std::optional<size_t> tokenInput() const;
  /// "" when the description is consistent (the ABI version this build
  /// reads; indices in range; alias pairs that point at each other, of one
  /// type; per-parameter state naming a parameter), else what is wrong.
  std::string check() const;
  /// The description as JSON (manifest.json's `step`; a checkpoint's
  /// metadata).
  std::string toJSON() const;
  /// The description as lines of `key value` and `key=value` tokens, which
  /// a compiled program's launcher reads back with `fromText` (no JSON
  /// parser in the runtime).
  std::string toText() const;
  /// Parses `toText`'s form; "" or what is wrong.
  static std::string fromText(const std::string &text, StepSignature &out);
};

} // namespace mlir::dtc

#endif // DTC_RUNTIME_STEPSIGNATURE_H

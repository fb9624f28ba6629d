//===- TrainingStep.h - a typed view of a training step ---------*- C++ -*-===//
//
// The step ABI (docs/StepABI.md) read from a function's attributes: which
// arguments are model inputs, parameters and training state (by kind and
// parameter), which results are the loss, gradients and updates, which
// argument each update is the next value of (donation as aliasing), how
// arguments and results are laid out over the mesh and padded. Passes that
// build the step set the attributes through the helpers below; passes and
// tools that read a step use the view, never names. `getSignature` gives
// the same description in plain C++ for the runtime (StepSignature.h).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_TRAININGSTEP_H
#define DTC_DIALECT_DTC_IR_TRAININGSTEP_H

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Runtime/StepSignature.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::dtc {

//===----------------------------------------------------------------------===//
// The attributes, one at a time
//===----------------------------------------------------------------------===//

/// The function's `dtc.step`, or null.
StepAttr getStepAttr(FunctionOpInterface func);
/// Argument `index`'s `dtc.state`, or null.
StateAttr getStateAttr(FunctionOpInterface func, unsigned index);
/// The state argument of `kind` belonging to parameter `param` (empty: the
/// step's own state, `step`, `loss_scale`, `growth_tracker`), or null.
BlockArgument getStateArgument(FunctionOpInterface func, StateKind kind,
                               StringRef param = {});
/// The result that is argument `index`'s next value (`dtc.aliasing_output`).
std::optional<unsigned> getAliasingOutput(FunctionOpInterface func,
                                          unsigned index);
/// The index of the step's loss result, when `func` is a step with one.
std::optional<unsigned> getLossResult(FunctionOpInterface func);

/// Set one field of the function's `dtc.step`, making one of the current
/// ABI version (kStepABIVersion) when it has none.
void setStepLoss(FunctionOpInterface func, unsigned result);
void setStepMicrobatches(FunctionOpInterface func, int64_t microbatches);
void setStepMesh(FunctionOpInterface func, FlatSymbolRefAttr mesh);
void setStepRng(FunctionOpInterface func, int64_t seed, unsigned counter);
void setStepLossScaling(FunctionOpInterface func, int64_t growthInterval);

/// The mesh a step's `dtc.step` names, or null (none named, or no such
/// `dtc.mesh` symbol).
MeshOp getStepMesh(FunctionOpInterface func);

//===----------------------------------------------------------------------===//
// The view
//===----------------------------------------------------------------------===//

class TrainingStep {
public:
  struct Parameter {
    unsigned argument;
    StringRef name;
    bool trainable;
    /// The result holding its gradient, if the step returns one.
    std::optional<unsigned> gradient;
    /// Its state arguments: AdamW's moments, SGD's momentum, a master copy.
    SmallVector<std::pair<StateKind, unsigned>, 3> state;

    std::optional<unsigned> stateOf(StateKind kind) const;
  };
  struct State {
    unsigned argument;
    StateAttr attr;
    StateKind getKind() const { return attr.getKind(); }
    /// The parameter it belongs to, or empty.
    StringRef getParam() const;
  };

  /// The view of `func`, a function with `dtc.step`; fails with an error
  /// on `func` naming what is inconsistent (an argument with two roles,
  /// state of no parameter, a gradient of an unknown parameter, an alias
  /// out of range or of another type, ...).
  static FailureOr<TrainingStep> get(func::FuncOp func);

  func::FuncOp getFunction() const { return func; }
  StepAttr getAttr() const { return attr; }
  /// The loss result, when the step has one (a pipeline stage before the
  /// last has none).
  std::optional<unsigned> getLossResult() const;
  /// The returned loss value (null without one).
  Value getLoss() const;

  ArrayRef<Parameter> getParameters() const { return parameters; }
  /// The parameter named `name` (its `dtc.param`), or null.
  const Parameter *getParameter(StringRef name) const;
  /// The parameter whose gradient result `index` is, or null.
  const Parameter *getGradientParameter(unsigned index) const;
  ArrayRef<unsigned> getInputs() const { return inputs; }
  ArrayRef<State> getStates() const { return states; }
  /// Argument `index`'s state, or null.
  const State *getState(unsigned index) const;
  /// The step's own state of `kind` (`step`, `loss_scale`,
  /// `growth_tracker`), or none.
  std::optional<unsigned> getStepState(StateKind kind) const;

  /// The result that is argument `index`'s next value (it is donated).
  std::optional<unsigned> getUpdate(unsigned argument) const;
  /// The argument result `index` is the next value of.
  std::optional<unsigned> getUpdatedArgument(unsigned result) const;

  /// How argument or result `index` is laid out: its `dtc.sharding`; a
  /// gradient without one is laid out as its parameter, an update as its
  /// argument. Null: whole on every rank.
  ShardingAttr getArgumentSharding(unsigned index) const;
  ShardingAttr getResultSharding(unsigned index) const;
  /// The real rows of argument or result `index` (`dtc.unpadded_rows`,
  /// resolved as the sharding is).
  std::optional<int64_t> getArgumentUnpaddedRows(unsigned index) const;
  std::optional<int64_t> getResultUnpaddedRows(unsigned index) const;
  /// The dimension those rows are counted along (`dtc.padded_dim`, else 0).
  int64_t getArgumentPaddedDim(unsigned index) const;
  int64_t getResultPaddedDim(unsigned index) const;

  /// The pp coordinates whose ranks hold argument or result `index` of a
  /// pipelined step: a parameter's `dtc.pp_ranks`, and its state's,
  /// gradient's and update's the same. Empty: every one.
  SmallVector<int64_t> getArgumentPipelineRanks(unsigned index) const;
  SmallVector<int64_t> getResultPipelineRanks(unsigned index) const;

  /// The mesh the step runs on, or null for one device.
  MeshOp getMesh() const;

  /// The description for the runtime. Fails, with an error on the
  /// function, when an argument has no role or a type the runtime cannot
  /// hold, or the step has no loss.
  FailureOr<StepSignature> getSignature() const;

private:
  TrainingStep(func::FuncOp func, StepAttr attr) : func(func), attr(attr) {}

  /// Integer attribute `name` of argument `index`; of result `index`, its
  /// own, else its parameter's (a gradient) or its argument's (an update).
  std::optional<int64_t> getArgumentInt(unsigned index, StringRef name) const;
  std::optional<int64_t> getResultInt(unsigned index, StringRef name) const;

  /// (Op handles' accessors are not const.)
  mutable func::FuncOp func;
  StepAttr attr;
  SmallVector<Parameter> parameters;
  /// Parameter name -> index in `parameters`.
  llvm::StringMap<unsigned> parameterIndex;
  SmallVector<unsigned> inputs;
  SmallVector<State> states;
  /// Per argument, its update; per result, the argument it updates.
  SmallVector<std::optional<unsigned>> updateOfArgument, argumentOfResult;
  /// Per result, the parameter whose gradient it is (an index into
  /// `parameters`).
  SmallVector<std::optional<unsigned>> gradientOf;
  /// Per argument, its state (an index into `states`).
  SmallVector<std::optional<unsigned>> stateOfArgument;
};

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_TRAININGSTEP_H

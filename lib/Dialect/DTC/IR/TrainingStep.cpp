//===- TrainingStep.cpp - a typed view of a training step -----------------===//

#include "dtc/Dialect/DTC/IR/TrainingStep.h"

#include "dtc/Dialect/DTC/IR/PipelineStages.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::dtc;

std::optional<unsigned> TrainingStep::Parameter::stateOf(StateKind kind) const {
  for (auto [k, argument] : state)
    if (k == kind)
      return argument;
  return std::nullopt;
}

StringRef TrainingStep::State::getParam() const {
  return attr.getParam() ? attr.getParam().getValue() : StringRef();
}

FailureOr<TrainingStep> TrainingStep::get(func::FuncOp func) {
  auto attr = func->getAttrOfType<StepAttr>(kStepAttrName);
  if (!attr)
    return func.emitError("@")
           << func.getName()
           << " is not a training step: it has no dtc.step attribute "
              "(dtc-attach-loss makes one)";
  TrainingStep step(func, attr);
  unsigned numArgs = func.getNumArguments(), numResults = func.getNumResults();
  step.updateOfArgument.assign(numArgs, std::nullopt);
  step.stateOfArgument.assign(numArgs, std::nullopt);
  step.argumentOfResult.assign(numResults, std::nullopt);
  step.gradientOf.assign(numResults, std::nullopt);

  llvm::StringMap<unsigned> &byName = step.parameterIndex;
  for (unsigned i = 0; i < numArgs; ++i) {
    auto param = func.getArgAttr(i, kParamAttrName);
    auto input = func.getArgAttr(i, kInputAttrName);
    auto state = func.getArgAttr(i, kStateAttrName);
    if ((param != nullptr) + (input != nullptr) + (state != nullptr) > 1)
      return func.emitError("argument ")
             << i << " has more than one role of dtc.param, dtc.input and "
             << "dtc.state";
    if (param) {
      auto name = dyn_cast<StringAttr>(param);
      if (!name)
        return func.emitError("argument ")
               << i << ": dtc.param must be a string, not " << param;
      auto trainable = func.getArgAttrOfType<BoolAttr>(i, kTrainableAttrName);
      if (!byName.try_emplace(name.getValue(), step.parameters.size()).second)
        return func.emitError("arguments ")
               << step.parameters[byName[name.getValue()]].argument << " and "
               << i << " are both the parameter '" << name.getValue() << "'";
      step.parameters.push_back(
          {i, name.getValue(), !trainable || trainable.getValue(), {}, {}});
    } else if (input) {
      step.inputs.push_back(i);
    } else if (state) {
      auto kind = dyn_cast<StateAttr>(state);
      if (!kind)
        return func.emitError("argument ")
               << i << ": dtc.state must be a #dtc.state, not " << state;
      step.stateOfArgument[i] = step.states.size();
      step.states.push_back({i, kind});
    }
  }
  // State: of a parameter, or the step's own; each at most once.
  for (const State &state : step.states) {
    StringRef param = state.getParam();
    std::optional<unsigned> other =
        param.empty() ? step.getStepState(state.getKind()) : std::nullopt;
    if (!param.empty()) {
      auto it = byName.find(param);
      if (it == byName.end())
        return func.emitError("argument ")
               << state.argument << " (" << state.attr
               << ") is state of no parameter: there is no dtc.param = \""
               << param << "\"";
      Parameter &owner = step.parameters[it->second];
      other = owner.stateOf(state.getKind());
      if (!other)
        owner.state.push_back({state.getKind(), state.argument});
    }
    if (other && *other != state.argument)
      return func.emitError("arguments ") << *other << " and " << state.argument
                                          << " are both " << state.attr;
  }
  // Results: gradients by their parameter's name.
  for (unsigned r = 0; r < numResults; ++r) {
    auto grad = func.getResultAttrOfType<StringAttr>(r, kGradAttrName);
    if (!grad)
      continue;
    auto it = byName.find(grad.getValue());
    if (it == byName.end())
      return func.emitError("result ")
             << r << " is the gradient of '" << grad.getValue()
             << "', which is no parameter";
    Parameter &param = step.parameters[it->second];
    if (param.gradient)
      return func.emitError("results ")
             << *param.gradient << " and " << r << " are both the gradient of '"
             << grad.getValue() << "'";
    param.gradient = r;
    step.gradientOf[r] = it->second;
  }
  // Donation: argument i's next value is result `dtc.aliasing_output`.
  for (unsigned i = 0; i < numArgs; ++i) {
    auto alias = func.getArgAttr(i, kAliasingOutputAttrName);
    if (!alias)
      continue;
    auto index = dyn_cast<IntegerAttr>(alias);
    if (!index || index.getInt() < 0 ||
        index.getInt() >= static_cast<int64_t>(numResults))
      return func.emitError("argument ")
             << i << ": dtc.aliasing_output " << alias
             << " is not a result index (the function has " << numResults
             << " results)";
    unsigned r = index.getInt();
    if (func.getArgument(i).getType() != func.getResultTypes()[r])
      return func.emitError("argument ")
             << i << " of type " << func.getArgument(i).getType()
             << " aliases result " << r << " of another type, "
             << func.getResultTypes()[r];
    if (step.argumentOfResult[r])
      return func.emitError("result ")
             << r << " is the next value of arguments "
             << *step.argumentOfResult[r] << " and " << i;
    if (step.gradientOf[r])
      return func.emitError("argument ")
             << i << " aliases result " << r << ", a gradient";
    step.updateOfArgument[i] = r;
    step.argumentOfResult[r] = i;
  }
  if (std::optional<int64_t> loss = attr.getLoss()) {
    if (*loss >= static_cast<int64_t>(numResults))
      return func.emitError("dtc.step: the loss is result ")
             << *loss << ", but the function has " << numResults;
    if (step.gradientOf[*loss] || step.argumentOfResult[*loss])
      return func.emitError("dtc.step: the loss, result ")
             << *loss << ", is also a gradient or an update";
  }
  if (RngAttr rng = attr.getRng()) {
    std::optional<unsigned> counter = step.getStepState(StateKind::Step);
    if (!counter || static_cast<int64_t>(*counter) != rng.getCounter())
      return func.emitError("dtc.step: the RNG counter, argument ")
             << rng.getCounter() << ", is not the step state";
  }
  return step;
}

std::optional<unsigned> TrainingStep::getLossResult() const {
  if (std::optional<int64_t> loss = attr.getLoss())
    return *loss;
  return std::nullopt;
}

Value TrainingStep::getLoss() const {
  std::optional<unsigned> loss = getLossResult();
  if (!loss)
    return Value();
  return func.getBody().front().getTerminator()->getOperand(*loss);
}

const TrainingStep::Parameter *
TrainingStep::getParameter(StringRef name) const {
  auto it = parameterIndex.find(name);
  return it == parameterIndex.end() ? nullptr : &parameters[it->second];
}

const TrainingStep::Parameter *
TrainingStep::getGradientParameter(unsigned index) const {
  if (index >= gradientOf.size() || !gradientOf[index])
    return nullptr;
  return &parameters[*gradientOf[index]];
}

const TrainingStep::State *TrainingStep::getState(unsigned index) const {
  if (index >= stateOfArgument.size() || !stateOfArgument[index])
    return nullptr;
  return &states[*stateOfArgument[index]];
}

std::optional<unsigned> TrainingStep::getStepState(StateKind kind) const {
  for (const State &state : states)
    if (state.getKind() == kind && state.getParam().empty())
      return state.argument;
  return std::nullopt;
}

std::optional<unsigned> TrainingStep::getUpdate(unsigned argument) const {
  return argument < updateOfArgument.size() ? updateOfArgument[argument]
                                            : std::nullopt;
}

std::optional<unsigned>
TrainingStep::getUpdatedArgument(unsigned result) const {
  return result < argumentOfResult.size() ? argumentOfResult[result]
                                          : std::nullopt;
}

ShardingAttr TrainingStep::getArgumentSharding(unsigned index) const {
  return func.getArgAttrOfType<ShardingAttr>(index, kShardingAttrName);
}

ShardingAttr TrainingStep::getResultSharding(unsigned index) const {
  if (auto own =
          func.getResultAttrOfType<ShardingAttr>(index, kShardingAttrName))
    return own;
  if (const Parameter *param = getGradientParameter(index))
    return getArgumentSharding(param->argument);
  if (std::optional<unsigned> arg = getUpdatedArgument(index))
    return getArgumentSharding(*arg);
  return ShardingAttr();
}

std::optional<int64_t> TrainingStep::getArgumentInt(unsigned index,
                                                    StringRef name) const {
  if (auto value = func.getArgAttrOfType<IntegerAttr>(index, name))
    return value.getInt();
  return std::nullopt;
}

std::optional<int64_t> TrainingStep::getResultInt(unsigned index,
                                                  StringRef name) const {
  if (auto value = func.getResultAttrOfType<IntegerAttr>(index, name))
    return value.getInt();
  if (const Parameter *param = getGradientParameter(index))
    return getArgumentInt(param->argument, name);
  if (std::optional<unsigned> arg = getUpdatedArgument(index))
    return getArgumentInt(*arg, name);
  return std::nullopt;
}

std::optional<int64_t>
TrainingStep::getArgumentUnpaddedRows(unsigned index) const {
  return getArgumentInt(index, kUnpaddedRowsAttrName);
}

std::optional<int64_t>
TrainingStep::getResultUnpaddedRows(unsigned index) const {
  return getResultInt(index, kUnpaddedRowsAttrName);
}

int64_t TrainingStep::getArgumentPaddedDim(unsigned index) const {
  return getArgumentInt(index, kPaddedDimAttrName).value_or(0);
}

int64_t TrainingStep::getResultPaddedDim(unsigned index) const {
  return getResultInt(index, kPaddedDimAttrName).value_or(0);
}

SmallVector<int64_t>
TrainingStep::getArgumentPipelineRanks(unsigned index) const {
  if (const State *state = getState(index))
    if (const Parameter *param = getParameter(state->getParam()))
      index = param->argument;
  auto ranks =
      func.getArgAttrOfType<DenseI64ArrayAttr>(index, kPipelineRanksAttrName);
  return ranks ? SmallVector<int64_t>(ranks.asArrayRef())
               : SmallVector<int64_t>();
}

SmallVector<int64_t>
TrainingStep::getResultPipelineRanks(unsigned index) const {
  if (const Parameter *param = getGradientParameter(index))
    return getArgumentPipelineRanks(param->argument);
  if (std::optional<unsigned> arg = getUpdatedArgument(index))
    return getArgumentPipelineRanks(*arg);
  return {};
}

MeshOp TrainingStep::getMesh() const { return getStepMesh(func); }

//===----------------------------------------------------------------------===//
// The plain-C++ description
//===----------------------------------------------------------------------===//

static StepStateKind runtimeKind(StateKind kind) {
  switch (kind) {
  case StateKind::Step:
    return StepStateKind::Step;
  case StateKind::ExpAvg:
    return StepStateKind::ExpAvg;
  case StateKind::ExpAvgSq:
    return StepStateKind::ExpAvgSq;
  case StateKind::MomentumBuffer:
    return StepStateKind::MomentumBuffer;
  case StateKind::Master:
    return StepStateKind::Master;
  case StateKind::LossScale:
    return StepStateKind::LossScale;
  case StateKind::GrowthTracker:
    return StepStateKind::GrowthTracker;
  }
  llvm_unreachable("unknown state kind");
}

static TensorLayout layoutOf(ShardingAttr sharding) {
  TensorLayout layout;
  if (!sharding)
    return layout;
  for (unsigned d = 0, e = sharding.getDims().size(); d < e; ++d) {
    std::vector<std::string> axes;
    for (StringRef axis : sharding.axesOf(d))
      axes.push_back(axis.str());
    layout.dims.push_back(std::move(axes));
  }
  layout.blocks.assign(sharding.getBlocks().begin(),
                       sharding.getBlocks().end());
  return layout;
}

/// The runtime element type of `type` (by the name both spell it with).
static std::optional<DType> runtimeDType(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return dtypeNamed(name);
}

FailureOr<StepSignature> TrainingStep::getSignature() const {
  StepSignature sig;
  sig.abiVersion = attr.getAbi();
  sig.function = func.getName().str();
  std::optional<unsigned> loss = getLossResult();
  if (!loss)
    return func.emitError("@") << func.getName()
                               << " has no loss (dtc.step names none): it "
                                  "is no step a runner can train with";
  sig.loss = *loss;
  sig.microbatches = attr.getMicrobatches();
  if (attr.getMesh()) {
    MeshOp mesh = getMesh();
    if (!mesh)
      return func.emitError("dtc.step: the mesh ")
             << attr.getMesh() << " is no dtc.mesh";
    for (auto [axis, size] : llvm::zip(mesh.getAxes(), mesh.getSizes())) {
      sig.mesh.axes.push_back(cast<StringAttr>(axis).str());
      sig.mesh.sizes.push_back(size);
    }
  }
  if (RngAttr rng = attr.getRng())
    sig.rng = StepSignature::Rng{rng.getSeed(),
                                 static_cast<size_t>(rng.getCounter())};
  if (LossScalingAttr scaling = attr.getLossScaling())
    sig.growthInterval = scaling.getGrowthInterval();
  sig.stage = attr.getStage();

  auto tensorOf = [&](Type type, std::string_view what, unsigned index,
                      DType &dtype, Shape &shape) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<DType> element = tensor && tensor.hasStaticShape()
                                       ? runtimeDType(tensor.getElementType())
                                       : std::nullopt;
    if (!element)
      return func.emitError(what)
             << " " << index << " has type " << type
             << "; a step's arguments and results are statically shaped "
                "tensors of dtc element types";
    dtype = *element;
    shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    return success();
  };

  llvm::DenseMap<unsigned, bool> trainable;
  for (const Parameter &param : parameters)
    trainable[param.argument] = param.trainable;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    StepArgument arg;
    if (failed(tensorOf(func.getArgument(i).getType(), "argument", i, arg.dtype,
                        arg.shape)))
      return failure();
    if (const State *state = getState(i)) {
      arg.role = ArgumentRole::State;
      arg.name = state->attr.getDisplayName();
      arg.stateKind = runtimeKind(state->getKind());
      arg.parameter = state->getParam().str();
    } else if (auto input =
                   func.getArgAttrOfType<StringAttr>(i, kInputAttrName)) {
      arg.role = ArgumentRole::Input;
      arg.name = input.str();
      if (auto classes =
              func.getArgAttrOfType<IntegerAttr>(i, kClassesAttrName))
        arg.classes = classes.getInt();
    } else if (auto param =
                   func.getArgAttrOfType<StringAttr>(i, kParamAttrName)) {
      arg.role = ArgumentRole::Parameter;
      arg.name = param.str();
      arg.trainable = trainable.lookup(i);
    } else {
      return func.emitError("argument ")
             << i << " has no role (dtc.input, dtc.param or dtc.state): a "
             << "runner cannot bind it";
    }
    arg.layout = layoutOf(getArgumentSharding(i));
    llvm::append_range(arg.layout.pipelineRanks, getArgumentPipelineRanks(i));
    arg.unpaddedRows = getArgumentUnpaddedRows(i);
    arg.layout.paddedDim = getArgumentPaddedDim(i);
    arg.aliasedResult = getUpdate(i);
    sig.arguments.push_back(std::move(arg));
  }
  // Per-parameter state that the partitioner split along with its
  // parameter but gave no layout of its own (under tensor parallelism,
  // AdamW's moments, a master copy) is laid out as that parameter.
  for (StepArgument &arg : sig.arguments) {
    if (arg.role != ArgumentRole::State || arg.parameter.empty() ||
        arg.layout.isSplit())
      continue;
    for (const StepArgument &param : sig.arguments)
      if (param.role == ArgumentRole::Parameter &&
          param.name == arg.parameter && param.shape == arg.shape) {
        arg.layout = param.layout;
        arg.unpaddedRows = param.unpaddedRows;
      }
  }
  for (unsigned r = 0, e = func.getNumResults(); r < e; ++r) {
    StepResult result;
    if (failed(tensorOf(func.getResultTypes()[r], "result", r, result.dtype,
                        result.shape)))
      return failure();
    if (r == *loss) {
      result.role = ResultRole::Loss;
      result.name = "loss";
    } else if (const Parameter *param = getGradientParameter(r)) {
      result.role = ResultRole::Gradient;
      result.name = param->name.str();
    } else if (std::optional<unsigned> arg = getUpdatedArgument(r)) {
      result.role = ResultRole::Update;
      result.name = sig.arguments[*arg].name;
      result.updatedArgument = *arg;
    } else {
      result.role = ResultRole::Output;
      result.name = getResultName(func, r);
    }
    result.layout = layoutOf(getResultSharding(r));
    llvm::append_range(result.layout.pipelineRanks, getResultPipelineRanks(r));
    result.unpaddedRows = getResultUnpaddedRows(r);
    result.layout.paddedDim = getResultPaddedDim(r);
    // (An update of such state: as its argument.)
    if (result.updatedArgument && !result.layout.isSplit()) {
      const StepArgument &updated = sig.arguments[*result.updatedArgument];
      if (updated.shape == result.shape) {
        result.layout = updated.layout;
        result.unpaddedRows = updated.unpaddedRows;
      }
    }
    sig.results.push_back(std::move(result));
  }
  return sig;
}

//===- StepAttrs.cpp - the step ABI's attributes and their checks ---------===//
//
// #dtc.state, #dtc.step and the argument attribute dtc.aliasing_output:
// their own checks, the dialect's checks of them on a function (indices in
// range, alias pairs of one type, the loss a float scalar, the RNG counter
// the step state), and the helpers passes set them with.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/TrainingStep.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dtc;

//===----------------------------------------------------------------------===//
// The attributes' own checks
//===----------------------------------------------------------------------===//

bool StateAttr::isPerParameter(StateKind kind) {
  switch (kind) {
  case StateKind::ExpAvg:
  case StateKind::ExpAvgSq:
  case StateKind::MomentumBuffer:
  case StateKind::Master:
    return true;
  case StateKind::Step:
  case StateKind::LossScale:
  case StateKind::GrowthTracker:
    return false;
  }
  return false;
}

std::string StateAttr::getDisplayName() const {
  std::string name = stringifyStateKind(getKind()).str();
  if (getParam())
    name += "/" + getParam().str();
  return name;
}

LogicalResult StateAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StateKind kind, StringAttr param) {
  if (isPerParameter(kind) && (!param || param.getValue().empty()))
    return emitError() << "state '" << stringifyStateKind(kind)
                       << "' belongs to a parameter: name it (of \"name\")";
  if (!isPerParameter(kind) && param)
    return emitError() << "state '" << stringifyStateKind(kind)
                       << "' belongs to no parameter, but names '"
                       << param.getValue() << "'";
  return success();
}

LogicalResult RngAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t seed, int64_t counter) {
  if (counter < 0)
    return emitError() << "the RNG counter is an argument index, not "
                       << counter;
  return success();
}

LogicalResult
LossScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t growthInterval) {
  if (growthInterval < 1)
    return emitError() << "growth_interval must be at least 1, not "
                       << growthInterval;
  return success();
}

LogicalResult StepAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t abi, std::optional<int64_t> loss,
                               int64_t microbatches, FlatSymbolRefAttr mesh,
                               RngAttr rng, LossScalingAttr lossScaling,
                               std::optional<int64_t> stage) {
  // Any ABI version parses, so that a runner can say which one it found.
  if (loss && *loss < 0)
    return emitError() << "the loss is a result index, not " << *loss;
  if (microbatches < 1)
    return emitError() << "microbatches must be at least 1, not "
                       << microbatches;
  if (stage && *stage < 0)
    return emitError() << "the pipeline stage must not be negative";
  return success();
}

//===----------------------------------------------------------------------===//
// The dialect's checks on functions
//===----------------------------------------------------------------------===//

/// Checks `dtc.step` on `func`: the indices it holds, and every alias of
/// the function's arguments at once (no result is the next value of two).
static LogicalResult verifyStep(FunctionOpInterface func, StepAttr step) {
  ArrayRef<Type> results = func.getResultTypes();
  if (std::optional<int64_t> loss = step.getLoss()) {
    if (*loss >= static_cast<int64_t>(results.size()))
      return func.emitOpError("dtc.step: the loss is result ")
             << *loss << ", but the function has " << results.size();
    auto type = dyn_cast<RankedTensorType>(results[*loss]);
    if (!type || type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
      return func.emitOpError("dtc.step: the loss, result ")
             << *loss << ", must be a float scalar, not " << results[*loss];
  }
  if (RngAttr rng = step.getRng()) {
    int64_t counter = rng.getCounter();
    ArrayRef<Type> args = func.getArgumentTypes();
    StateAttr state =
        counter < static_cast<int64_t>(args.size())
            ? func.getArgAttrOfType<StateAttr>(counter, kStateAttrName)
            : StateAttr();
    if (!state || state.getKind() != StateKind::Step ||
        args[counter] !=
            RankedTensorType::get({}, IntegerType::get(func.getContext(), 64)))
      return func.emitOpError("dtc.step: the RNG counter, argument ")
             << counter << ", must be the step state (tensor<i64>, "
             << "#dtc.state<step>)";
  }
  if (FlatSymbolRefAttr mesh = step.getMesh())
    if (!SymbolTable::lookupNearestSymbolFrom<MeshOp>(func, mesh))
      return func.emitOpError("dtc.step: the mesh ")
             << mesh << " is no dtc.mesh";
  llvm::DenseMap<int64_t, unsigned> aliased;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto alias =
            func.getArgAttrOfType<IntegerAttr>(i, kAliasingOutputAttrName)) {
      auto [it, inserted] = aliased.try_emplace(alias.getInt(), i);
      if (!inserted)
        return func.emitOpError("result ")
               << alias.getInt() << " is the next value of arguments "
               << it->second << " and " << i;
    }
  return success();
}

LogicalResult DTCDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() != kStepAttrName)
    return success();
  auto step = dyn_cast<StepAttr>(attr.getValue());
  if (!step)
    return op->emitOpError("dtc.step must be a #dtc.step, not ")
           << attr.getValue();
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitOpError("dtc.step belongs on a function");
  return verifyStep(func, step);
}

LogicalResult DTCDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() == kStateAttrName) {
    if (!isa<StateAttr>(attr.getValue()))
      return op->emitOpError("argument ")
             << argIndex << ": dtc.state must be a #dtc.state, not "
             << attr.getValue();
    return success();
  }
  if (attr.getName() != kAliasingOutputAttrName)
    return success();
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto index = dyn_cast<IntegerAttr>(attr.getValue());
  if (!func || !index)
    return op->emitOpError("argument ")
           << argIndex
           << ": dtc.aliasing_output must be a result index of a function";
  ArrayRef<Type> results = func.getResultTypes();
  if (index.getInt() < 0 ||
      index.getInt() >= static_cast<int64_t>(results.size()))
    return op->emitOpError("argument ")
           << argIndex << " aliases result " << index.getInt()
           << ", but the function has " << results.size();
  Type argType = func.getArgumentTypes()[argIndex];
  if (argType != results[index.getInt()])
    return op->emitOpError("argument ")
           << argIndex << " of type " << argType << " aliases result "
           << index.getInt() << " of another type, " << results[index.getInt()];
  return success();
}

//===----------------------------------------------------------------------===//
// Reading and setting them
//===----------------------------------------------------------------------===//

StepAttr mlir::dtc::getStepAttr(FunctionOpInterface func) {
  return func->getAttrOfType<StepAttr>(kStepAttrName);
}

StateAttr mlir::dtc::getStateAttr(FunctionOpInterface func, unsigned index) {
  return func.getArgAttrOfType<StateAttr>(index, kStateAttrName);
}

BlockArgument mlir::dtc::getStateArgument(FunctionOpInterface func,
                                          StateKind kind, StringRef param) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (StateAttr state = getStateAttr(func, i);
        state && state.getKind() == kind &&
        (state.getParam() ? state.getParam().getValue() : StringRef()) == param)
      return func.getArgument(i);
  return BlockArgument();
}

std::optional<unsigned> mlir::dtc::getAliasingOutput(FunctionOpInterface func,
                                                     unsigned index) {
  if (auto alias =
          func.getArgAttrOfType<IntegerAttr>(index, kAliasingOutputAttrName))
    return alias.getInt();
  return std::nullopt;
}

std::optional<unsigned> mlir::dtc::getLossResult(FunctionOpInterface func) {
  StepAttr step = getStepAttr(func);
  if (!step || !step.getLoss())
    return std::nullopt;
  return *step.getLoss();
}

MeshOp mlir::dtc::getStepMesh(FunctionOpInterface func) {
  StepAttr step = getStepAttr(func);
  if (!step || !step.getMesh())
    return MeshOp();
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(func, step.getMesh());
}

namespace {
/// The fields of a #dtc.step, to change one and rebuild it.
struct StepFields {
  int64_t abi = kStepABIVersion;
  std::optional<int64_t> loss;
  int64_t microbatches = 1;
  FlatSymbolRefAttr mesh;
  RngAttr rng;
  LossScalingAttr lossScaling;
  std::optional<int64_t> stage;
};
} // namespace

static void updateStep(FunctionOpInterface func,
                       function_ref<void(StepFields &)> change) {
  StepFields fields;
  if (StepAttr step = getStepAttr(func))
    fields = {step.getAbi(),  step.getLoss(), step.getMicrobatches(),
              step.getMesh(), step.getRng(),  step.getLossScaling(),
              step.getStage()};
  change(fields);
  func->setAttr(kStepAttrName,
                StepAttr::get(func.getContext(), fields.abi, fields.loss,
                              fields.microbatches, fields.mesh, fields.rng,
                              fields.lossScaling, fields.stage));
}

void mlir::dtc::setStepLoss(FunctionOpInterface func, unsigned result) {
  updateStep(func, [&](StepFields &f) { f.loss = result; });
}

void mlir::dtc::setStepMicrobatches(FunctionOpInterface func,
                                    int64_t microbatches) {
  updateStep(func, [&](StepFields &f) { f.microbatches = microbatches; });
}

void mlir::dtc::setStepMesh(FunctionOpInterface func, FlatSymbolRefAttr mesh) {
  updateStep(func, [&](StepFields &f) { f.mesh = mesh; });
}

void mlir::dtc::setStepRng(FunctionOpInterface func, int64_t seed,
                           unsigned counter) {
  updateStep(func, [&](StepFields &f) {
    f.rng = RngAttr::get(func.getContext(), seed, counter);
  });
}

void mlir::dtc::setStepLossScaling(FunctionOpInterface func,
                                   int64_t growthInterval) {
  updateStep(func, [&](StepFields &f) {
    f.lossScaling = LossScalingAttr::get(func.getContext(), growthInterval);
  });
}

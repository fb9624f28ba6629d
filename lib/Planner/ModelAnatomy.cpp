//===- ModelAnatomy.cpp - what the planner knows of a model ---------------===//
//
// One analysis of the global step: the parameters (bytes per element of
// each kind of state, their transformer layer, their tensor-parallel
// layout per degree), the layers, the FLOPs, one layer's and the rest's
// roofline time and saved activations. Configurations are then evaluated
// from these figures alone (PlanSearch.cpp).
//
//===----------------------------------------------------------------------===//

#include "dtc/Planner/Planner.h"

#include "dtc/Analysis/Collectives.h"
#include "dtc/Analysis/Layers.h"
#include "dtc/Analysis/Liveness.h"
#include "dtc/Analysis/Phases.h"
#include "dtc/Analysis/Roofline.h"
#include "dtc/Analysis/StepCost.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "dtc/Transforms/Parallel/Passes.h"
#include "dtc/Transforms/Remat/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

#include <functional>
#include <map>
#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::dtc;

int64_t PlannedParameter::getNumElements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

int64_t ModelAnatomy::getNumParameters() const {
  int64_t n = 0;
  for (const PlannedParameter &p : parameters)
    if (p.trained)
      n += p.getNumElements();
  return n;
}

PlanMemory ModelAnatomy::getStateBeforeSharding() const {
  PlanMemory state;
  for (const PlannedParameter &p : parameters) {
    int64_t n = p.getNumElements();
    state.parameters += n * p.paramBytes;
    state.gradients += n * p.gradBytes;
    state.masterWeights += n * p.masterBytes;
    state.optimizerState += n * p.stateBytes;
  }
  state.optimizerState += stepStateBytes;
  return state;
}

static int64_t elementBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensorByteSize(RankedTensorType::get({}, tensor.getElementType()));
}

/// What dtc-expert-parallel makes of `globalStep` at ep=2 (with
/// dtc-sink-shards, which makes its exchanges all-to-alls): the bytes of
/// the whole batch's buffers the all-to-alls exchange, those of the
/// tokens gathered whole and of the partial sums scattered back (the loop
/// form's), their calls, and the expert parameters whose gradients are
/// summed over ep (the backward computes them before the exchange: a bias
/// added to the dispatched tokens); nothing where it does not partition.
struct ExpertExchanges {
  double bytes = 0, wholeBytes = 0;
  int64_t calls = 0;
  std::set<std::string> summedGradients;
};

/// Whether `value` or a view of it is what the step returns.
static bool isReturned(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    return isa<func::ReturnOp>(user) ||
           (user->getNumOperands() == 1 && user->getNumResults() == 1 &&
            isReturned(user->getResult(0)));
  });
}

/// `step`'s exchanges, read off a partitioned copy of its module.
static ExpertExchanges measureExpertExchanges(func::FuncOp step) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(step->getParentOp()->clone()));
  ScopedDiagnosticHandler quiet(step.getContext(),
                                [](Diagnostic &) { return success(); });
  PassManager pm(step.getContext());
  ExpertParallelOptions ep;
  ep.size = 2;
  pm.addPass(createExpertParallel(ep));
  pm.addNestedPass<func::FuncOp>(createSinkShards());
  ExpertExchanges exchanges;
  if (failed(pm.run(*copy)))
    return exchanges;
  for (auto func : copy->getOps<func::FuncOp>()) {
    for (const CollectiveCall &call : analyzeCollectives(func).calls) {
      // Activations only: not the gradients' and the outputs' sums, nor
      // the loss's scalars.
      auto type = cast<RankedTensorType>(call.op->getResult(0).getType());
      if (call.axes != std::vector<std::string>{"ep"} ||
          type.getNumElements() <= 1 || isReturned(call.op->getResult(0)))
        continue;
      // An all-to-all's bus bytes are half a rank's buffer, which is half
      // the batch's; a gather's (a scatter's) half the whole batch's
      // tokens, an all-reduce's all of them (counted twice, as its bus
      // bytes at any size are).
      (call.kind == "all_to_all" ? exchanges.bytes : exchanges.wholeBytes) +=
          (call.kind == "all_to_all" ? 4 : 2) * call.busBytes;
      ++exchanges.calls;
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName))
        if (isa_and_nonnull<AllReduceOp, ReduceScatterOp>(
                ret.getOperand(i).getDefiningOp()))
          exchanges.summedGradients.insert(grad.str());
  }
  return exchanges;
}

/// The step's result that `value` is (through casts and views: ops of one
/// operand and as many elements), if any.
static std::optional<unsigned> resultOf(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<func::ReturnOp>(user))
      return use.getOperandNumber();
    if (user->getNumOperands() == 1 && user->getNumResults() == 1 &&
        cast<ShapedType>(user->getResult(0).getType()).getNumElements() ==
            cast<ShapedType>(value.getType()).getNumElements())
      if (std::optional<unsigned> result = resultOf(user->getResult(0)))
        return result;
  }
  return std::nullopt;
}

/// `step`'s traffic over tp, read off a copy partitioned over `degree`
/// ranks (nothing where it does not partition): a collective's place is
/// `placeOf`'s for its location (that of the forward op it is for: an op the
/// partitioner adds, and a backward op, carry it), a weight's gradient's
/// `placeOfGradient`'s for the step's result it is.
static std::optional<TensorParallelTraffic>
measureTensorParallel(func::FuncOp step, int64_t degree, bool sequenceParallel,
                      int64_t places,
                      llvm::function_ref<int64_t(Location)> placeOf,
                      llvm::function_ref<int64_t(StringRef)> placeOfGradient) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(step->getParentOp()->clone()));
  ScopedDiagnosticHandler quiet(step.getContext(),
                                [](Diagnostic &) { return success(); });
  PassManager pm(step.getContext());
  if (sequenceParallel) {
    SequenceParallelOptions options;
    options.size = degree;
    pm.addPass(createSequenceParallel(options));
  } else {
    TensorParallelOptions options;
    options.size = degree;
    pm.addPass(createTensorParallel(options));
  }
  // What dtc-compile does to the collectives after: a gather the readers
  // cut becomes an all-to-all; under sequence parallelism or a half
  // precision the backward gathers activations again rather than hold
  // them (dtc-remat's policy none, which leaves the rest as it is).
  pm.addNestedPass<func::FuncOp>(createSinkShards());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createRemat());
  auto func = copy->lookupSymbol<func::FuncOp>(step.getName());
  if (failed(pm.run(*copy)) || !func)
    return std::nullopt;
  TensorParallelTraffic traffic;
  for (auto *v :
       {&traffic.forwardBytes, &traffic.backwardBytes, &traffic.weightBytes,
        &traffic.forwardCalls, &traffic.backwardCalls, &traffic.weightCalls})
    v->assign(places, 0);
  llvm::DenseMap<Operation *, StepPhase> phases = classifyStepPhases(func);
  for (const CollectiveCall &call : analyzeCollectives(func).calls) {
    if (call.axes != std::vector<std::string>{"tp"})
      continue;
    std::optional<unsigned> result = resultOf(call.op->getResult(0));
    auto grad =
        result ? func.getResultAttrOfType<StringAttr>(*result, kGradAttrName)
               : StringAttr();
    if (grad && call.kind == "all_reduce") {
      traffic.partialGradients.insert(grad.str());
      continue;
    }
    if (grad) {
      int64_t place = placeOfGradient(grad.getValue());
      traffic.weightBytes[place] += call.busBytes;
      ++traffic.weightCalls[place];
      continue;
    }
    int64_t place = placeOf(call.op->getLoc());
    bool forward = phases.lookup(call.op) == StepPhase::Forward;
    (forward ? traffic.forwardBytes : traffic.backwardBytes)[place] +=
        call.busBytes;
    ++(forward ? traffic.forwardCalls : traffic.backwardCalls)[place];
  }
  return traffic;
}

FailureOr<ModelAnatomy> mlir::dtc::analyzeModel(func::FuncOp globalStep,
                                                func::FuncOp singleDevice,
                                                const DeviceSpec &device,
                                                ArrayRef<int64_t> tpDegrees,
                                                bool sequenceParallel) {
  ModelAnatomy model;
  FailureOr<TrainingStep> global = TrainingStep::get(globalStep);
  FailureOr<TrainingStep> single = TrainingStep::get(singleDevice);
  if (failed(global) || failed(single))
    return failure();

  globalStep.walk([&](TopKOp router) {
    model.experts = router.getInput().getType().getDimSize(router.getDim());
  });
  SmallVector<unsigned> expertParams = getExpertParameters(globalStep);
  ExpertExchanges exchanges;
  if (model.experts && model.experts % 2 == 0)
    exchanges = measureExpertExchanges(globalStep);
  model.expertExchangeBytes = exchanges.bytes;
  model.expertWholeBatchBytes = exchanges.wholeBytes;
  model.expertExchangeCalls = exchanges.calls;
  for (unsigned i = 0, e = globalStep.getNumResults(); i < e; ++i)
    if (globalStep.getResultAttr(i, kOutputAttrName))
      model.summedOutputBytes += tensorByteSize(globalStep.getResultTypes()[i]);
  // The forward in program order.
  llvm::DenseMap<Operation *, StepPhase> phases =
      classifyStepPhases(globalStep);
  Schedule order = programOrder(globalStep.getBody().front());
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, entry] : llvm::enumerate(order))
    position[entry.op] = i;
  // Where the forward first uses each parameter (getFirstUses).
  SmallVector<Operation *> forwardOps;
  for (auto &entry : order)
    if (phases.lookup(entry.op) == StepPhase::Forward)
      forwardOps.push_back(entry.op);
  llvm::DenseMap<unsigned, Operation *> firstUses =
      getFirstUses(globalStep, forwardOps);
  auto firstUseOf = [&](unsigned argument) -> int64_t {
    Operation *op = firstUses.lookup(argument);
    return op ? position.lookup(op) : order.size();
  };

  // The layers, numbered in the order they start (getLayerStarts).
  llvm::StringMap<int64_t> layerOfUnit;
  SmallVector<int64_t> layerStarts;
  for (auto [unit, op] : getLayerStarts(globalStep, forwardOps)) {
    layerOfUnit[unit.getValue()] = layerOfUnit.size();
    layerStarts.push_back(position.lookup(op));
  }
  model.layers = layerStarts.size();
  if (model.layers == 0)
    return globalStep.emitError(
        "dtc-plan: the model has no layers the planner can find: it plans "
        "models whose layers' initializers are named '<path>.<index>.' "
        "(layers.3.attn.wq.weight), so that it can split them between "
        "pipeline stages");

  // Whether the backward reads `value` or a view of it (a transpose, a
  // cast: single-operand ops of it, which the forward computes).
  std::function<bool(Value)> readByBackward = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return phases.lookup(user) == StepPhase::Backward ||
             (user->getNumOperands() == 1 && user->getNumResults() == 1 &&
              readByBackward(user->getResult(0)));
    });
  };
  // The positions of the forward ops that read `value` or a view of it,
  // not the views: where they run is where their readers do.
  std::function<void(Value, llvm::function_ref<void(int64_t)>)> forwardReadsOf =
      [&](Value value, llvm::function_ref<void(int64_t)> at) {
        for (Operation *user : value.getUsers()) {
          if (phases.lookup(user) != StepPhase::Forward)
            continue;
          if (user->getNumOperands() == 1 && user->getNumResults() == 1)
            forwardReadsOf(user->getResult(0), at);
          else
            at(position.lookup(user));
        }
      };
  // Where a forward op at `at` runs: before the layers, in the layer that
  // starts last at or before it, or after the last layer's last read of
  // its own parameters.
  int64_t lastLayerEnd = layerStarts.back();
  for (const TrainingStep::Parameter &param : global->getParameters()) {
    auto unit =
        globalStep.getArgAttrOfType<StringAttr>(param.argument, kUnitAttrName);
    if (unit && layerOfUnit.count(unit.getValue()) &&
        layerOfUnit.lookup(unit.getValue()) == model.layers - 1)
      forwardReadsOf(globalStep.getArgument(param.argument), [&](int64_t at) {
        lastLayerEnd = std::max(lastLayerEnd, at);
      });
  }
  auto placeOf = [&](int64_t at) -> int64_t {
    if (at < layerStarts.front())
      return kBeforeLayers;
    if (at > lastLayerEnd)
      return kAfterLayers;
    return llvm::upper_bound(layerStarts, at) - layerStarts.begin() - 1;
  };
  for (const TrainingStep::Parameter &param : global->getParameters()) {
    PlannedParameter planned;
    planned.name = param.name.str();
    Type type = globalStep.getArgument(param.argument).getType();
    auto tensor = cast<RankedTensorType>(type);
    planned.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    planned.paramBytes = elementBytes(type);
    // A parameter that is not trained (frozen, or a buffer the exporter
    // kept as one) is held whole, with nothing else.
    planned.trained = param.trainable && param.gradient;
    if (planned.trained) {
      planned.gradBytes =
          elementBytes(globalStep.getResultTypes()[*param.gradient]);
      // Its sum, before the casts and views that make the gradient.
      Value sum = globalStep.getBody().front().getTerminator()->getOperand(
          *param.gradient);
      while (Operation *def = sum.getDefiningOp()) {
        if (def->getNumOperands() != 1)
          break;
        sum = def->getOperand(0);
      }
      planned.gradSumBytes = elementBytes(sum.getType());
    }
    if (const TrainingStep::Parameter *withState =
            single->getParameter(param.name))
      for (auto [kind, argument] : withState->state)
        (kind == StateKind::Master ? planned.masterBytes
                                   : planned.stateBytes) +=
            elementBytes(singleDevice.getArgument(argument).getType());
    auto unit =
        globalStep.getArgAttrOfType<StringAttr>(param.argument, kUnitAttrName);
    if (unit && layerOfUnit.count(unit.getValue())) {
      planned.layer = layerOfUnit.lookup(unit.getValue());
    } else {
      // Before the layers (an embedding) or after them (the head): where
      // the forward first reads it.
      planned.layer = firstUseOf(param.argument) < layerStarts.front()
                          ? kBeforeLayers
                          : kAfterLayers;
    }
    std::set<int64_t> places;
    forwardReadsOf(globalStep.getArgument(param.argument),
                   [&](int64_t at) { places.insert(placeOf(at)); });
    places.erase(planned.layer);
    planned.alsoReadBy.assign(places.begin(), places.end());
    planned.readByBackward =
        readByBackward(globalStep.getArgument(param.argument));
    planned.expert = llvm::is_contained(expertParams, param.argument);
    planned.expertGradientSummed =
        planned.expert && exchanges.summedGradients.count(planned.name);
    model.parameters.push_back(std::move(planned));
  }
  for (const TrainingStep::State &state : single->getStates())
    if (state.getParam().empty())
      model.stepStateBytes +=
          tensorByteSize(singleDevice.getArgument(state.argument).getType());

  // The batch and the residual stream (what an attention block returns,
  // all heads together).
  for (unsigned input : global->getInputs()) {
    auto type =
        dyn_cast<RankedTensorType>(globalStep.getArgument(input).getType());
    if (type && type.getRank() >= 2) {
      model.batch = type.getDimSize(0);
      model.sequence = type.getDimSize(1);
      break;
    }
  }
  if (model.batch <= 0)
    return globalStep.emitError(
        "dtc-plan: expected a [batch, sequence] model input");
  // The residual stream's width: what an attention returns, all heads
  // together.
  for (auto &entry : order)
    if (auto attention = dyn_cast<AttentionOp>(entry.op)) {
      auto type = cast<RankedTensorType>(attention->getResult(0).getType());
      model.hidden = type.getDimSize(1) * type.getDimSize(3);
      model.activationBytes = elementBytes(type);
      auto key = cast<RankedTensorType>(attention.getK().getType());
      model.keyValueWidth = key.getDimSize(1) * key.getDimSize(3);
      break;
    }
  if (model.hidden == 0) {
    // The commonest length among the first layer's parameter dimensions:
    // its norms' scales and its projections' inputs or outputs.
    std::map<int64_t, int64_t> lengths;
    for (const PlannedParameter &param : model.parameters)
      if (param.layer == 0)
        for (int64_t length : param.shape)
          if (++lengths[length] > lengths[model.hidden]) {
            model.hidden = length;
            model.activationBytes = param.paramBytes;
          }
    if (model.hidden == 0)
      return globalStep.emitError(
          "dtc-plan: cannot tell the width of the residual stream (no "
          "attention op, no parameter in the first layer)");
  }

  // FLOPs and times. The times at the device's achievable rates.
  StepCost cost = analyzeCost(globalStep);
  model.modelFlops = cost.phase(StepPhase::Forward).matmulFlops +
                     cost.phase(StepPhase::Backward).matmulFlops;
  model.forwardFlops = cost.phase(StepPhase::Forward).matmulFlops;
  DeviceSpec achievable = device;
  for (PeakFlops *peak : {&achievable.f64, &achievable.f32, &achievable.bf16,
                          &achievable.f16, &achievable.i8})
    peak->matmul *= device.matmulEfficiency;
  achievable.memoryBytesPerSecond *= device.memoryEfficiency;
  // Attention scores and probabilities ([..., sequence, sequence]): what a
  // fused attention kernel keeps on chip.
  auto isScore = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    int64_t rank = type ? type.getRank() : 0;
    return rank >= 3 && type.getDimSize(rank - 1) == model.sequence &&
           type.getDimSize(rank - 2) == model.sequence;
  };
  // The residual stream's values ([tokens..., hidden], computed there: not
  // a view of it, a part of a fused projection or a projection's output):
  // what sequence parallelism splits between the tp ranks and tensor
  // parallelism alone keeps whole on each (norms, residual adds, dropout).
  auto isStream = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    Operation *def = value.getDefiningOp();
    return def && !isa<MatmulOp, SplitOp, ReshapeOp, TransposeOp>(def) &&
           type && type.getRank() >= 2 && type.hasStaticShape() &&
           type.getShape().back() == model.hidden &&
           type.getNumElements() == model.batch * model.sequence * model.hidden;
  };
  // Per attention kind (as compiled, fused): forward, of it the layers'
  // and their ops on the residual stream, backward.
  double forward[2] = {0, 0}, backward[2] = {0, 0}, layersSpan[2] = {0, 0},
         layersStream[2] = {0, 0};
  for (auto [i, entry] : llvm::enumerate(order)) {
    if (entry.stepInvariant || isa<CollectiveOpInterface>(entry.op))
      continue;
    OpTime time = getRooflineTime(entry.op, achievable);
    // Fused: the op's memory traffic less its scores' share.
    double bytes = 0, scoreBytes = 0;
    for (Value value :
         llvm::concat<Value>(entry.op->getOperands(), entry.op->getResults())) {
      double size = static_cast<double>(tensorByteSize(value.getType()));
      bytes += size;
      scoreBytes += isScore(value) ? size : 0;
    }
    OpTime fused = time;
    if (bytes > 0)
      fused.memorySeconds *= 1 - scoreBytes / bytes;
    StepPhase phase = phases.lookup(entry.op);
    bool inLayers = static_cast<int64_t>(i) >= layerStarts.front() &&
                    static_cast<int64_t>(i) < layerStarts.back();
    bool onStream =
        entry.op->getNumResults() && isStream(entry.op->getResult(0));
    for (int kind : {0, 1}) {
      double seconds = (kind ? fused : time).seconds();
      if (phase == StepPhase::Forward) {
        forward[kind] += seconds;
        layersSpan[kind] += inLayers ? seconds : 0;
        layersStream[kind] += inLayers && onStream ? seconds : 0;
      } else if (phase == StepPhase::Backward) {
        backward[kind] += seconds;
      }
    }
  }
  // From layer 0's start to layer L-1's: L-1 whole layers.
  for (int kind : {0, 1}) {
    ForwardTimes &times = kind ? model.fusedTimes : model.unfusedTimes;
    times.layerSeconds = model.layers > 1
                             ? layersSpan[kind] / (model.layers - 1)
                             : forward[kind] / 2;
    times.outerSeconds =
        std::max(0.0, forward[kind] - model.layers * times.layerSeconds);
    times.backwardRatio =
        forward[kind] > 0 ? backward[kind] / forward[kind] : 2;
    times.streamShare =
        layersSpan[kind] > 0 ? layersStream[kind] / layersSpan[kind] : 0;
  }

  // Activations: what a layer keeps for its backward, and the rest of the
  // single-device peak.
  std::vector<int64_t> saved = savedBytesPerTransformerUnit(singleDevice);
  std::vector<int64_t> scores =
      savedBytesPerTransformerUnit(singleDevice, isScore);
  std::vector<int64_t> stream =
      savedBytesPerTransformerUnit(singleDevice, isStream);
  if (!saved.empty()) {
    model.savedBytesPerLayer = *llvm::max_element(saved);
    model.scoreBytesPerLayer = *llvm::max_element(scores);
    model.streamBytesPerLayer = *llvm::max_element(stream);
  }
  model.outerActivationBytes =
      std::max<int64_t>(0, activationPeak(singleDevice) -
                               model.layers * model.savedBytesPerLayer);
  // The same without any scores (the backward's temporaries among them).
  std::function<bool(Value)> intermediate = intermediatesOf(singleDevice);
  int64_t fusedPeak =
      computeLiveness(
          programOrder(singleDevice.getBody().front()),
          [&](Value value) { return intermediate(value) && !isScore(value); })
          .peak;
  model.fusedOuterActivationBytes = std::max<int64_t>(
      0, fusedPeak - model.layers *
                         (model.savedBytesPerLayer - model.scoreBytesPerLayer));

  // Tensor-parallel layouts, per degree (quietly: a degree the model does
  // not take is left out).
  for (int64_t tp : tpDegrees) {
    std::vector<int64_t> dims(model.parameters.size(), -1);
    if (tp > 1) {
      ScopedDiagnosticHandler quiet(globalStep.getContext(),
                                    [](Diagnostic &) { return success(); });
      FailureOr<SmallVector<TensorParallelSplit>> splits =
          getTensorParallelSplits(globalStep, tp, TPStrategy::Megatron, "");
      if (failed(splits) || splits->empty())
        continue;
      llvm::StringMap<int64_t> byName;
      for (const TensorParallelSplit &split : *splits)
        byName[getArgumentName(globalStep, split.argument)] = split.dim;
      for (auto [i, param] : llvm::enumerate(model.parameters))
        if (auto it = byName.find(param.name); it != byName.end())
          dims[i] = it->second;
    }
    model.tensorParallelDims[tp] = std::move(dims);
  }
  // What tp communicates at each degree.
  // (Locations of the model's nodes only: the ops dtc adds, the loss's
  // among them, share the file's, and run after the layers. Of its ops on
  // the batch, the last: a weight's transpose the exporter hoists before
  // the layers, and the reshape of a projection's input before the
  // projection starts its layer, carry the projection's.)
  auto index = [&](int64_t place) {
    return place == kBeforeLayers  ? 0
           : place == kAfterLayers ? model.layers + 1
                                   : place + 1;
  };
  llvm::DenseSet<Value> batchValues = getBatchDependentValues(globalStep);
  llvm::DenseMap<Location, int64_t> placeOfLocation;
  for (auto [i, entry] : llvm::enumerate(order))
    if (phases.lookup(entry.op) == StepPhase::Forward &&
        isa<NameLoc>(entry.op->getLoc()) && entry.op->getNumResults() &&
        batchValues.contains(entry.op->getResult(0)))
      placeOfLocation[entry.op->getLoc()] = index(placeOf(i));
  llvm::StringMap<int64_t> placeOfParameter;
  for (const PlannedParameter &param : model.parameters)
    placeOfParameter[param.name] = index(param.layer);
  model.sequenceParallel = sequenceParallel;
  for (const auto &[tp, dims] : model.tensorParallelDims) {
    if (tp == 1)
      continue;
    if (std::optional<TensorParallelTraffic> traffic = measureTensorParallel(
            globalStep, tp, sequenceParallel, model.layers + 2,
            [&](Location loc) {
              return placeOfLocation.lookup_or(loc, model.layers + 1);
            },
            [&](StringRef name) {
              auto it = placeOfParameter.find(name);
              return it == placeOfParameter.end() ? model.layers + 1
                                                  : it->second;
            }))
      model.tensorParallelTraffic[tp] = std::move(*traffic);
  }
  return model;
}

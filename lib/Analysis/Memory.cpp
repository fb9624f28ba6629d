//===- Memory.cpp - the bytes a rank holds for a step ---------------------===//

#include "dtc/Analysis/Memory.h"

#include "dtc/Analysis/PipelineRanks.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"

using namespace mlir;
using namespace mlir::dtc;

StepMemory mlir::dtc::analyzeMemory(func::FuncOp step,
                                    ArrayRef<ScheduledOp> schedule,
                                    int64_t pipelineCoordinate) {
  StepMemory memory;
  PipelineHolders holders;
  if (pipelineCoordinate >= 0)
    holders = getPipelineHolders(step);
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    if (!holders.holdsArgument(i, pipelineCoordinate))
      continue;
    int64_t bytes = tensorByteSize(step.getArgument(i).getType());
    if (step.getArgAttr(i, kParamAttrName))
      memory.parameters += bytes;
    if (StateAttr kind = getStateAttr(step, i))
      (kind.getKind() == StateKind::Master ? memory.masterWeights
                                           : memory.optimizerState) += bytes;
  }
  // ZeRO stage 1 keeps the whole gradient buffer (its results are the
  // rank's shards of it: split over dp, or ep, where the parameter is not),
  // stage 2 only the shard.
  auto zero = step->getAttrOfType<IntegerAttr>(kZeroStageAttrName);
  MeshOp mesh = getStepMesh(step);
  for (unsigned i = 0, e = step.getNumResults(); i < e; ++i) {
    if (!step.getResultAttr(i, kGradAttrName) ||
        !holders.holdsResult(i, pipelineCoordinate))
      continue;
    int64_t bytes = tensorByteSize(step.getResultTypes()[i]);
    auto sharding =
        step.getResultAttrOfType<ShardingAttr>(i, kShardingAttrName);
    if (zero && zero.getInt() == 1 && sharding && mesh) {
      BlockArgument param = getParameterArgument(
          step,
          step.getResultAttrOfType<StringAttr>(i, kGradAttrName).getValue());
      auto own = param ? step.getArgAttrOfType<ShardingAttr>(
                             param.getArgNumber(), kShardingAttrName)
                       : ShardingAttr();
      for (unsigned d = 0, r = sharding.getDims().size(); d < r; ++d)
        for (StringRef axis : {"dp", "ep"})
          if (llvm::is_contained(sharding.axesOf(d), axis) &&
              !(own && llvm::is_contained(own.axesOf(d), axis)))
            bytes *= mesh.axisSize(axis);
    }
    memory.gradients += bytes;
  }
  MemoryTimeline timeline = computeLiveness(schedule, intermediatesOf(step));
  memory.activationPeak = timeline.peak;
  if (timeline.peakIndex >= 0)
    memory.peakOp = schedule[timeline.peakIndex].op;
  return memory;
}

StepMemory mlir::dtc::analyzeMemory(func::FuncOp step) {
  return analyzeMemory(step, programOrder(step.getBody().front()));
}

double mlir::dtc::parseByteSize(StringRef text) {
  static const std::pair<StringRef, double> units[] = {{"KiB", 1024.0},
                                                       {"MiB", 1048576.0},
                                                       {"GiB", 1073741824.0},
                                                       {"TiB", 1099511627776.0},
                                                       {"KB", 1e3},
                                                       {"MB", 1e6},
                                                       {"GB", 1e9},
                                                       {"TB", 1e12},
                                                       {"B", 1}};
  double scale = 1;
  text = text.trim();
  for (auto [unit, factor] : units)
    if (text.consume_back_insensitive(unit)) {
      scale = factor;
      break;
    }
  double value;
  if (text.trim().getAsDouble(value) || value < 0)
    return -1;
  return value * scale;
}

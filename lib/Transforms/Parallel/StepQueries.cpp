//===- StepQueries.cpp - what the parallel passes ask of a step -----------===//
//
// Questions about a differentiated step that the layout choosers (tensor
// parallelism, ZeRO) ask: which parameter an op reads, which ops make the
// loss.
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "dtc/Dialect/DTC/IR/TrainingStep.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dtc;

std::optional<WeightRead> mlir::dtc::traceParam(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  WeightRead read;
  read.paramDim.resize(type.getRank());
  std::iota(read.paramDim.begin(), read.paramDim.end(), 0);
  while (Operation *def = value.getDefiningOp()) {
    if (auto cast = dyn_cast<CastOp>(def)) {
      value = cast.getInput();
    } else if (auto transpose = dyn_cast<TransposeOp>(def)) {
      for (int64_t &d : read.paramDim)
        d = transpose.getPermutation()[d];
      value = transpose.getInput();
    } else {
      return std::nullopt;
    }
  }
  auto arg = cast<BlockArgument>(value);
  auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func.getArgAttr(arg.getArgNumber(), kParamAttrName))
    return std::nullopt;
  read.param = arg;
  return read;
}

llvm::DenseSet<Operation *> mlir::dtc::forwardOps(func::FuncOp func) {
  llvm::DenseSet<Operation *> forward;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Value> work;
  if (std::optional<unsigned> loss = getLossResult(func))
    work.push_back(ret.getOperand(*loss));
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (def && forward.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return forward;
}

//===- ExpertParallel.cpp - split the experts and the batch over ep -------===//
//
// Expert parallelism (GShard, DeepSpeed-MoE, Megatron-Core): the `ep` ranks
// are data-parallel ranks that also split the experts. Every model input is
// split along the batch, every expert parameter (stacked [experts, ...])
// along the experts, and the propagation engine does the rest: the tokens a
// rank dispatched to the experts ([experts, rows, capacity, ...], its rows)
// meet the expert weights (its experts) in the expert matmuls, a conflict
// the engine resolves by exchanging rows for experts (a gather along the
// rows cut along the experts: an all-to-all, once dtc-sink-shards sees
// it), and back again where the combine reads them. The gradients of the
// expert parameters stay split (no ep sum); the others are summed over ep
// like data parallelism's.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "AxisPartitioner.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_EXPERTPARALLEL
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The number of experts: the routed dimension of the routers' top_k ops,
/// alike in all of them.
FailureOr<int64_t> expertCount(func::FuncOp func) {
  std::optional<int64_t> experts;
  WalkResult walk = func.walk([&](TopKOp topK) {
    int64_t routed = topK.getInput().getType().getDimSize(topK.getDim());
    if (experts && *experts != routed) {
      topK.emitError("expert parallelism: this router chooses among ")
          << routed << " experts, another among " << *experts;
      return WalkResult::interrupt();
    }
    experts = routed;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!experts)
    return func.emitError(
        "expert parallelism needs a mixture of experts: the step has no "
        "router (a top_k choosing experts)");
  return *experts;
}

/// The expert parameters: stacked along dimension 0 by the experts. A
/// parameter of rank 2 or more with `experts` rows qualifies unless a
/// matmul reads its rows as anything but a batch dimension (a router's
/// weight [experts, features] is read as a projection's columns).
SmallVector<SplitArgument> expertSeeds(func::FuncOp func, int64_t experts) {
  llvm::SmallDenseSet<unsigned> projections;
  func.walk([&](MatmulOp matmul) {
    for (Value operand : {matmul.getLhs(), matmul.getRhs()}) {
      std::optional<WeightRead> read = traceParam(operand);
      if (!read)
        continue;
      int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
      auto rows = llvm::find(read->paramDim, 0);
      if (rows != read->paramDim.end() &&
          rows - read->paramDim.begin() >= rank - 2)
        projections.insert(read->param.getArgNumber());
    }
  });
  SmallVector<SplitArgument> seeds;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    if (func.getArgAttr(i, kParamAttrName) && type.getRank() >= 2 &&
        type.getDimSize(0) == experts && !projections.contains(i))
      seeds.push_back({i, /*dim=*/0});
  }
  return seeds;
}

struct ExpertParallelPass
    : public dtc::impl::ExpertParallelBase<ExpertParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (size < 1) {
      module.emitError("dtc-expert-parallel needs ep >= 1");
      return signalPassFailure();
    }
    if (size == 1)
      return;
    FlatSymbolRefAttr meshRef = meshWithAxis(module, "ep", size);
    if (!meshRef)
      return signalPassFailure();
    for (auto func :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      FailureOr<int64_t> experts = expertCount(func);
      if (failed(experts))
        return signalPassFailure();
      if (*experts % size != 0) {
        func.emitError("expert parallelism needs ep to divide the ")
            << *experts << " experts, not " << size.getValue();
        return signalPassFailure();
      }
      SmallVector<SplitArgument> seeds = expertSeeds(func, *experts);
      if (seeds.empty()) {
        func.emitError("expert parallelism: no parameter is stacked by the ")
            << *experts
            << " experts ([experts, ...]): the experts' weights are "
               "separate tensors";
        return signalPassFailure();
      }
      SmallVector<SplitArgument> splits;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (func.getArgAttr(i, kInputAttrName))
          splits.push_back({i, /*dim=*/0});
      splits.append(seeds);
      // The expert parameters' gradients stay split like them; the rest
      // are summed over the ranks' rows.
      ResultSplits resultSplit(func, seeds);
      AxisPartitioner engine(func, size, meshRef, "ep", "expert-parallel",
                             splits, resultSplit);
      engine.setStrict(strictSharding);
      engine.setExchangesAreDesign(true);
      if (failed(engine.run()))
        return signalPassFailure();
      SignatureEditor signature(func);
      for (const SplitArgument &split : splits)
        recordSharding(signature, split.index, meshRef, split.dim, "ep");
      signature.commit();
      setStepMesh(func, meshRef);
    }
  }
};

} // namespace

SmallVector<unsigned> mlir::dtc::getExpertParameters(func::FuncOp func) {
  SmallVector<unsigned> params;
  bool routed = false;
  func.walk([&](TopKOp) { routed = true; });
  if (!routed)
    return params;
  FailureOr<int64_t> experts = expertCount(func);
  if (failed(experts))
    return params;
  for (const SplitArgument &seed : expertSeeds(func, *experts))
    params.push_back(seed.index);
  return params;
}

//===- ContextParallel.cpp - split the sequence over cp -------------------===//
//
// Context parallelism: every model input [batch, sequence, ...] is split
// along the sequence over the `cp` axis and the propagation engine carries
// that split through the step. Only attention needs other ranks' tokens.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "AxisPartitioner.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/DeadOps.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_CONTEXTPARALLEL
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The model inputs with the sequence as dimension 1: split there, in
/// `chunks` equal chunks (a multiple of the ranks).
FailureOr<SmallVector<SplitArgument>> sequenceSeeds(func::FuncOp func,
                                                    int64_t chunks) {
  FailureOr<int64_t> length = sequenceLengthOf(func);
  if (failed(length))
    return failure();
  if (*length % chunks != 0)
    return func.emitError("context parallelism needs a sequence length that ")
           << chunks << " equal chunks divide, not " << *length;
  SmallVector<SplitArgument> seeds;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    if (func.getArgAttr(i, kInputAttrName) && type.getRank() >= 2 &&
        type.getDimSize(1) == *length)
      seeds.push_back({i, /*dim=*/1});
  }
  return seeds;
}

struct ContextParallelPass
    : public dtc::impl::ContextParallelBase<ContextParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (size < 1) {
      module.emitError("dtc-context-parallel needs cp >= 1");
      return signalPassFailure();
    }
    if (size == 1)
      return;
    bool ring = attention == "ring";
    if (attention != "all-gather" && attention != "ulysses" && !ring) {
      module.emitError("dtc-context-parallel: unknown attention '")
          << attention << "' (ring, all-gather or ulysses)";
      return signalPassFailure();
    }
    FlatSymbolRefAttr meshRef = meshWithAxis(module, "cp", size);
    if (!meshRef)
      return signalPassFailure();
    for (auto func :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      // Autodiff's dead ops (a constant mask's gradient, which reads the
      // probabilities ring attention never makes) are not partitioned.
      eraseDeadOps(func.getBody().front());
      FailureOr<SmallVector<SplitArgument>> seeds =
          sequenceSeeds(func, ring ? 2 * size : size);
      if (failed(seeds))
        return signalPassFailure();
      // The results are whole: the gradients of the replicated
      // parameters are summed over the ranks' tokens.
      AxisPartitioner engine(
          func, size, meshRef, "cp", "context-parallel", *seeds,
          [](unsigned) { return std::optional<SplitArgument>(); });
      engine.setStrict(strictSharding);
      engine.setTokenSplitAttention(ring ? TokenSplitAttention::Ring
                                    : attention == "ulysses"
                                        ? TokenSplitAttention::ExchangeHeads
                                        : TokenSplitAttention::GatherKeys);
      // Ring attention balances a causal mask's work with the zigzag
      // order: rank r holds chunks r and 2 cp - 1 - r of the sequence
      // (mirrored blocks, to the runtime).
      engine.setZigzag(ring);
      if (failed(engine.run()))
        return signalPassFailure();
      SignatureEditor signature(func);
      for (const SplitArgument &seed : *seeds)
        recordSharding(signature, seed.index, meshRef, seed.dim, "cp",
                       ring ? -2 : 1);
      signature.commit();
      setStepMesh(func, meshRef);
    }
  }
};

} // namespace

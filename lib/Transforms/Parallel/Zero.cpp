//===- Zero.cpp - ZeRO: optimizer state and gradients sharded over dp -----===//
//
// ZeRO (Rajbhandari et al., SC 2020) removes the redundancy of data
// parallelism: every rank keeps and updates only its shard of the
// optimizer state. Expressed as shardings on the `dp` axis of the step the
// optimizer built: the state arguments are split, the gradient each update
// reads is this rank's part of the all-reduced gradient -- so the
// all-reduce becomes a reduce-scatter --, the update runs on the shard, and
// the updated parameters are all-gathered. The partitioner derives all of
// it from the state's layouts.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_ZERO
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

struct ZeroPass : public dtc::impl::ZeroBase<ZeroPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stage == 0)
      return;
    if (stage != 1 && stage != 2) {
      module.emitError("dtc-zero: stage ")
          << static_cast<int64_t>(stage)
          << " is not built (stages 1 and 2 are; stage 3 is planned)";
      return signalPassFailure();
    }
    auto mesh = module.lookupSymbol<MeshOp>("mesh");
    int64_t dp = mesh ? mesh.axisSize("dp") : -1;
    if (dp < 2) {
      module.emitError("dtc-zero shards over the dp axis: compile with "
                       "--mesh dp=N, N >= 2");
      return signalPassFailure();
    }
    auto meshRef = FlatSymbolRefAttr::get(mesh);
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(shard(func, dp, meshRef)))
        return signalPassFailure();
  }

  /// The dimension of `param`'s state to split over dp: the first that dp
  /// divides and no other axis splits already.
  std::optional<int64_t> stateDim(func::FuncOp func, BlockArgument param,
                                  int64_t dp) {
    auto type = cast<RankedTensorType>(param.getType());
    auto sharding = func.getArgAttrOfType<ShardingAttr>(param.getArgNumber(),
                                                        kShardingAttrName);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.getDimSize(d) % dp == 0 &&
          (!sharding || sharding.axesOf(d).empty()))
        return d;
    return std::nullopt;
  }

  LogicalResult shard(func::FuncOp func, int64_t dp, FlatSymbolRefAttr mesh) {
    OpBuilder b(&getContext());
    // The parameters with state, and the dimension their state splits on.
    llvm::StringMap<int64_t> dims;
    SmallVector<SplitArgument> seeds;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto state = func.getArgAttrOfType<StringAttr>(i, kStateAttrName);
      if (!state || !state.getValue().contains('/'))
        continue;
      StringRef name = state.getValue().split('/').second;
      BlockArgument param;
      for (BlockArgument arg : func.getArguments())
        if (auto p = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                       kParamAttrName);
            p && p.getValue() == name)
          param = arg;
      std::optional<int64_t> dim =
          param ? stateDim(func, param, dp) : std::nullopt;
      if (!dim) {
        if (param && dims.insert({name, -1}).second)
          func.emitWarning("ZeRO: the optimizer state of '")
              << name << "' stays whole: no dimension of "
              << param.getType() << " splits over dp=" << dp;
        continue;
      }
      dims[name] = *dim;
      seeds.push_back({i, *dim, 1});
    }

    // Each update reads this rank's part of its gradient.
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName);
      auto it = grad ? dims.find(grad.getValue()) : dims.end();
      if (it == dims.end() || it->second < 0)
        continue;
      Value whole = ret.getOperand(i);
      auto type = cast<RankedTensorType>(whole.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[it->second] /= dp;
      b.setInsertionPointAfterValue(whole);
      Value part = ShardOp::create(
          b, whole.getLoc(), type.clone(shape), whole, mesh,
          b.getStrArrayAttr({"dp"}), b.getI64IntegerAttr(it->second),
          b.getI64IntegerAttr(1), StringAttr());
      whole.replaceUsesWithIf(part, [&](OpOperand &use) {
        return use.getOwner() != part.getDefiningOp() &&
               !isa<func::ReturnOp>(use.getOwner());
      });
    }

    // Results: the state's updates and (its part of) each gradient split
    // like the state; the updated parameters whole.
    auto splitOf = [&](StringRef name) -> std::optional<SplitArgument> {
      auto it = dims.find(name);
      if (it == dims.end() || it->second < 0)
        return std::nullopt;
      return SplitArgument{0, it->second, 1};
    };
    auto resultSplit = [&](unsigned i) -> std::optional<SplitArgument> {
      if (auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName))
        return splitOf(grad.getValue());
      auto update = func.getResultAttrOfType<StringAttr>(i, kUpdateAttrName);
      if (update && update.getValue().contains('/'))
        return splitOf(update.getValue().split('/').second);
      return std::nullopt;
    };
    std::string purpose = "ZeRO-" + std::to_string(stage);
    if (failed(partitionOverAxis(func, dp, mesh, "dp", purpose, seeds,
                                 resultSplit)))
      return failure();
    for (const SplitArgument &seed : seeds)
      recordSharding(func, seed.index, mesh, seed.dim, "dp");
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName))
        if (std::optional<SplitArgument> split = splitOf(grad.getValue()))
          recordResultSharding(func, i, mesh, split->dim, "dp");
    func->setAttr(kZeroStageAttrName, b.getI64IntegerAttr(stage));
    return success();
  }
};

} // namespace

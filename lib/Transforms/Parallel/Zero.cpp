//===- Zero.cpp - ZeRO: state, gradients and parameters sharded over dp --===//
//
// ZeRO (Rajbhandari et al., SC 2020) removes the redundancy of data
// parallelism: every rank keeps and updates only its shard of the
// optimizer state (stage 1), of the gradients (2) and of the parameters
// (3). Expressed as shardings on the `dp` axis of the step the optimizer
// built: the state arguments are split, the gradient each update reads is
// this rank's part of the all-reduced gradient -- so the all-reduce becomes
// a reduce-scatter --, the update runs on the shard, and the updated
// parameters are all-gathered; the partitioner derives all of it from the
// state's layouts. What sharding cannot say is scheduling: stage 2's
// reduce-scatter per microbatch, and stage 3's gathers placed just before
// the forward's and again before the backward's reads.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

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
    if (stage < 1 || stage > 3) {
      module.emitError("dtc-zero: stage ")
          << static_cast<int64_t>(stage) << " does not exist (1, 2 or 3)";
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
  /// divides and no other axis splits already, else the first that dp
  /// divides (its part of another axis's part: a tp-split bias).
  std::optional<int64_t> stateDim(func::FuncOp func, BlockArgument param,
                                  int64_t dp) {
    auto type = cast<RankedTensorType>(param.getType());
    auto sharding = func.getArgAttrOfType<ShardingAttr>(param.getArgNumber(),
                                                        kShardingAttrName);
    for (bool free : {true, false})
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.getDimSize(d) % dp == 0 &&
            (!free || !sharding || sharding.axesOf(d).empty()))
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
      BlockArgument param = getParameterArgument(func, name);
      std::optional<int64_t> dim =
          param ? stateDim(func, param, dp) : std::nullopt;
      if (!dim) {
        if (param && dims.insert({name, -1}).second)
          func.emitWarning("ZeRO: the optimizer state of '")
              << name << "' stays whole: no dimension of " << param.getType()
              << " splits over dp=" << dp;
        continue;
      }
      dims[name] = *dim;
      seeds.push_back({i, *dim, 1});
      // The state is laid out as its parameter (over tp), then split.
      if (Attribute layout =
              func.getArgAttr(param.getArgNumber(), kShardingAttrName))
        func.setArgAttr(i, kShardingAttrName, layout);
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
      Value part = ShardOp::create(b, whole.getLoc(), type.clone(shape), whole,
                                   mesh, b.getStrArrayAttr({"dp"}),
                                   b.getI64IntegerAttr(it->second),
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
    if (stage >= 2 && microbatches > 1)
      scatterPerMicrobatch(func);
    if (stage == 3)
      shardParameters(func, dp, mesh, dims);
    func->setAttr(kZeroStageAttrName, b.getI64IntegerAttr(stage));
    return success();
  }

  /// Stages 2 and 3 keep no whole gradient buffer: where the gradients of
  /// several microbatches are added up (dtc-gradient-accumulation), each
  /// microbatch's gradient is reduce-scattered as soon as it is made and
  /// the shards are added -- K reduce-scatters per step instead of one.
  void scatterPerMicrobatch(func::FuncOp func) {
    SmallVector<ReduceScatterOp> scatters;
    func.walk([&](ReduceScatterOp op) { scatters.push_back(op); });
    OpBuilder b(&getContext());
    std::function<Value(Value, ReduceScatterOp)> distribute =
        [&](Value sum, ReduceScatterOp like) -> Value {
      auto add = sum.getDefiningOp<AddOp>();
      if (!add || !add->hasOneUse() ||
          add.getLhs().getType() != add.getRhs().getType() ||
          add.getLhs().getType() != add.getType()) {
        b.setInsertionPointAfterValue(sum);
        auto part = cast<ReduceScatterOp>(b.clone(*like));
        part->setOperand(0, sum);
        return part.getResult();
      }
      Value lhs = distribute(add.getLhs(), like);
      Value rhs = distribute(add.getRhs(), like);
      b.setInsertionPointAfter(add);
      Value shards = AddOp::create(b, add.getLoc(), lhs, rhs);
      return shards;
    };
    for (ReduceScatterOp scatter : scatters) {
      auto add = scatter.getInput().getDefiningOp<AddOp>();
      if (!add || !add->hasOneUse())
        continue;
      Value shards = distribute(scatter.getInput(), scatter);
      scatter.getResult().replaceAllUsesWith(shards);
      scatter.erase();
      // The whole-gradient sums nothing reads any more.
      SmallVector<Operation *> dead{add};
      while (!dead.empty()) {
        Operation *op = dead.pop_back_val();
        if (!op->use_empty())
          continue;
        for (Value operand : op->getOperands())
          if (auto inner = operand.getDefiningOp<AddOp>())
            dead.push_back(inner);
        op->erase();
      }
    }
  }

  /// Stage 3: each parameter with sharded state is itself kept as its shard
  /// (the one its update makes), and gathered where the step reads it
  /// whole: once just before its first use in the forward, and again just
  /// before its first use in the backward -- views of it the forward made
  /// (a transpose, a bf16 cast) are made again from the second gather -- so
  /// that neither gather lives from the forward into the backward. The
  /// unit is one parameter. Collectives have side effects: no CSE merges
  /// or hoists them.
  void shardParameters(func::FuncOp func, int64_t dp, FlatSymbolRefAttr mesh,
                       const llvm::StringMap<int64_t> &dims) {
    llvm::DenseSet<Operation *> forward = forwardOps(func);
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(&getContext());
    for (BlockArgument param : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(param.getArgNumber(),
                                                    kParamAttrName);
      auto it = name ? dims.find(name.getValue()) : dims.end();
      if (it == dims.end() || it->second < 0)
        continue;
      int64_t dim = it->second;
      auto whole = cast<RankedTensorType>(param.getType());
      SmallVector<int64_t> shape(whole.getShape());
      shape[dim] /= dp;
      param.setType(whole.clone(shape));

      // The update: its shard is the next step's parameter.
      for (OpOperand &operand : ret->getOpOperands())
        if (auto update = func.getResultAttrOfType<StringAttr>(
                operand.getOperandNumber(), kUpdateAttrName);
            update && update == name)
          if (auto gather = operand.get().getDefiningOp<AllGatherOp>()) {
            operand.set(gather.getInput());
            if (gather->use_empty())
              gather.erase();
          }

      // The optimizer's slices of the whole parameter are the parameter.
      for (Operation *user : llvm::make_early_inc_range(param.getUsers()))
        if (auto shard = dyn_cast<ShardOp>(user);
            shard && static_cast<int64_t>(shard.getDim()) == dim &&
            shard.getBlocks() == 1) {
          shard.getResult().replaceAllUsesWith(param);
          shard.erase();
        }

      // The forward's and the backward's reads of it and of its views.
      SmallVector<OpOperand *> forwardUses, backwardUses;
      SmallVector<Value> work{param};
      while (!work.empty()) {
        Value value = work.pop_back_val();
        for (OpOperand &use : value.getUses()) {
          Operation *user = use.getOwner();
          bool view = isa<TransposeOp, CastOp>(user) && forward.contains(user);
          if (value == param && !view)
            (forward.contains(user) ? forwardUses : backwardUses)
                .push_back(&use);
          else if (value == param)
            forwardUses.push_back(&use);
          else if (!forward.contains(user))
            backwardUses.push_back(&use);
          if (view)
            work.push_back(user->getResult(0));
        }
      }
      std::string why = "ZeRO-3: " + name.str() + " whole for the ";
      Value forwardWhole = gatherBefore(b, param, whole, dim, mesh, forwardUses,
                                        why + "forward", "forward");
      for (OpOperand *use : forwardUses)
        use->set(forwardWhole);
      // Views for the backward are made again from its own gather.
      Value backwardWhole =
          gatherBefore(b, param, whole, dim, mesh, backwardUses,
                       why + "backward", "backward");
      llvm::DenseMap<Value, Value> again;
      again[param] = backwardWhole;
      if (forwardWhole)
        again[forwardWhole] = backwardWhole;
      for (OpOperand *use : backwardUses)
        use->set(remake(b, use->get(), again, backwardWhole));
      recordSharding(func, param.getArgNumber(), mesh, dim, "dp");
    }
    func.setFunctionType(FunctionType::get(
        &getContext(), func.getBody().front().getArgumentTypes(),
        ret.getOperandTypes()));
  }

  /// An all-gather of `param` right before the first of `uses`, marked with
  /// its phase for bucketing.
  Value gatherBefore(OpBuilder &b, Value param, RankedTensorType whole,
                     int64_t dim, FlatSymbolRefAttr mesh,
                     ArrayRef<OpOperand *> uses, const std::string &why,
                     StringRef phase) {
    if (uses.empty())
      return {};
    Operation *first = uses.front()->getOwner();
    for (OpOperand *use : uses)
      if (use->getOwner()->isBeforeInBlock(first))
        first = use->getOwner();
    b.setInsertionPoint(first);
    auto gather = AllGatherOp::create(
        b, first->getLoc(), whole, param, mesh, b.getStrArrayAttr({"dp"}),
        b.getI64IntegerAttr(dim), b.getStringAttr(why));
    gather->setAttr(kGatherPhaseAttrName, b.getStringAttr(phase));
    return gather;
  }

  /// `value` (the forward's gather or a view of it) made again from the
  /// backward's gather, right after what it is made from.
  Value remake(OpBuilder &b, Value value, llvm::DenseMap<Value, Value> &again,
               Value backwardWhole) {
    if (Value done = again.lookup(value))
      return done;
    Operation *view = value.getDefiningOp();
    Value from = remake(b, view->getOperand(0), again, backwardWhole);
    b.setInsertionPointAfterValue(from);
    Operation *copy = b.clone(*view);
    copy->setOperand(0, from);
    again[value] = copy->getResult(0);
    return copy->getResult(0);
  }
};

} // namespace

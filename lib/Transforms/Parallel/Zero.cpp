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
// A parameter no dimension of which dp divides is padded along its first
// dimension no other axis splits (its first, unless tensor parallelism
// splits that, as it does a column-parallel [out, in] weight's): its state
// gets zeros there up to a multiple of dp, and its update reads its
// gradient and itself with zeros appended (the padding is all-reduced, so
// the all-reduce still becomes a reduce-scatter); the padding stays zero
// through AdamW and SGD, and the parameter's update is its leading part.
// Padded gradients (and stage 3's padded parameter shards) record their
// true extent, `dtc.unpadded_rows` (and `dtc.padded_dim` when it is not
// the first dimension), so dtc-run strips it from dumps.
//
// Under expert parallelism the ep ranks are data-parallel ranks as well:
// after dp, the same is done over `ep` for the parameters ep does not split
// (DeepSpeed-MoE's sharding of the non-expert state over every
// data-parallel rank), along a dimension no other axis splits. shard()'s
// `dp` is the size of the axis it splits over.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace mlir::dtc {
#define GEN_PASS_DEF_ZERO
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Where ZeRO padded a parameter: along `dim`, from `size` entries.
struct Padding {
  int64_t dim;
  int64_t size;
};

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
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<TrainingStep> step = TrainingStep::get(func);
      if (failed(step))
        return signalPassFailure();
      // The mesh the step runs on: its data-parallel ranks are dp's and,
      // for what is not an expert's, ep's too (DeepSpeed-MoE's ZeRO).
      MeshOp mesh = step->getMesh();
      int64_t dp = mesh ? mesh.axisSize("dp") : -1;
      int64_t ep = mesh ? mesh.axisSize("ep") : -1;
      if (dp < 2 && ep < 2) {
        module.emitError("dtc-zero shards over the data-parallel ranks: "
                         "compile with --mesh dp=N (or ep=N), N >= 2");
        return signalPassFailure();
      }
      auto meshRef = FlatSymbolRefAttr::get(mesh);
      if (dp >= 2) {
        axis = "dp";
        if (failed(shard(*step, dp, meshRef)))
          return signalPassFailure();
      }
      if (ep >= 2) {
        // Then the state of the parameters ep does not split (the view
        // taken again: the types moved).
        if (dp >= 2)
          scatterOverDpFirst(func);
        axis = "ep";
        splitBefore = dp >= 2;
        FailureOr<TrainingStep> again = TrainingStep::get(func);
        if (failed(again) || failed(shard(*again, ep, meshRef)))
          return signalPassFailure();
      }
      func->setAttr(kZeroStageAttrName,
                    Builder(&getContext()).getI64IntegerAttr(stage));
    }
  }

  /// A gradient summed over dp and ep together whose readers all keep
  /// their dp part (a non-expert parameter's, after dp's split) is
  /// reduce-scattered over dp first and the part summed over ep: ep's
  /// split then makes that sum a reduce-scatter too.
  static void scatterOverDpFirst(func::FuncOp func) {
    SmallVector<AllReduceOp> sums;
    func.walk([&](AllReduceOp sum) {
      SmallVector<StringRef> axes(sum.getAxes().getAsValueRange<StringAttr>());
      llvm::sort(axes);
      if (axes == SmallVector<StringRef>{"dp", "ep"})
        sums.push_back(sum);
    });
    IRRewriter rewriter(func.getContext());
    for (AllReduceOp sum : sums)
      (void)scatterInsteadOfSum(sum, rewriter, /*someAxes=*/true);
  }

  /// The axis shard() splits over, and whether dp split the state before.
  std::string axis = "dp";
  bool splitBefore = false;

  /// Whether argument `index` is split over `meshAxis`.
  static bool isSplitOver(func::FuncOp func, unsigned index,
                          StringRef meshAxis) {
    auto layout = func.getArgAttrOfType<ShardingAttr>(index, kShardingAttrName);
    for (unsigned d = 0, e = layout ? layout.getDims().size() : 0; d < e; ++d)
      if (llvm::is_contained(layout.axesOf(d), meshAxis))
        return true;
    return false;
  }

  /// The dimension of `param`'s state (laid out as `param`) to split over
  /// dp: the first that dp divides and no other axis splits already, else
  /// the first that dp divides (its part of another axis's part: a tp-split
  /// bias).
  std::optional<int64_t> stateDim(func::FuncOp func, BlockArgument param,
                                  int64_t dp) {
    auto type = cast<RankedTensorType>(param.getType());
    auto sharding = func.getArgAttrOfType<ShardingAttr>(param.getArgNumber(),
                                                        kShardingAttrName);
    for (bool free : {true, false}) {
      // Over ep after dp, a dimension of its own: one dp splits too would
      // be gathered over ep and then over dp for every update.
      if (!free && splitBefore)
        break;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (type.getDimSize(d) % dp == 0 &&
            (!free || !sharding || sharding.axesOf(d).empty()))
          return d;
    }
    return std::nullopt;
  }

  /// `step`'s arguments and results (none added or removed here, so the
  /// view stays valid while types and the body change).
  LogicalResult shard(const TrainingStep &step, int64_t dp,
                      FlatSymbolRefAttr mesh) {
    func::FuncOp func = step.getFunction();
    OpBuilder b(&getContext());
    // The parameters with state, and the dimension their state splits on;
    // those padded, and where.
    llvm::StringMap<int64_t> dims;
    llvm::StringMap<Padding> padded;
    SmallVector<SplitArgument> seeds;
    // Every stage is laid out by the parameters' state: without any, ZeRO
    // would change nothing and say nothing.
    if (llvm::none_of(step.getStates(), [](const TrainingStep::State &state) {
          return !state.getParam().empty();
        }))
      return func.emitError("dtc-zero: no parameter has optimizer state to "
                            "shard (SGD without momentum keeps none); ZeRO "
                            "needs AdamW or SGD with momentum");
    SignatureEditor states(func);
    for (const TrainingStep::State &state : step.getStates()) {
      StringRef name = state.getParam();
      if (name.empty())
        continue;
      unsigned i = state.argument;
      BlockArgument param = func.getArgument(step.getParameter(name)->argument);
      // Over ep: not an expert's state (split over ep with its expert), nor
      // one dp padded (which keeps dp's split alone).
      if (axis == "ep" && (isSplitOver(func, param.getArgNumber(), "ep") ||
                           func.getArgAttr(i, kUnpaddedRowsAttrName)))
        continue;
      // (After dp's split, the state's own layout.)
      std::optional<int64_t> dim =
          stateDim(func, splitBefore ? func.getArgument(i) : param, dp);
      if (!dim && !splitBefore)
        if (std::optional<int64_t> pad = padDim(func, param)) {
          dim = *pad;
          Padding padding{
              *pad, cast<RankedTensorType>(param.getType()).getDimSize(*pad)};
          padded.try_emplace(name, padding);
          auto type = cast<RankedTensorType>(func.getArgument(i).getType());
          func.getArgument(i).setType(
              type.clone(paddedShape(type, dp, padding.dim)));
          recordPadding(states, i, padding);
        }
      if (!dim && splitBefore) {
        // (Split over dp alone: a bias, a norm's scale.)
        dims.insert({name, -1});
        continue;
      }
      if (!dim) {
        if (dims.insert({name, -1}).second)
          func.emitWarning("ZeRO: the optimizer state of '")
              << name << "' stays whole: no dimension of " << param.getType()
              << " splits over " << axis << "=" << dp
              << ", and one split by another axis is not padded";
        continue;
      }
      dims[name] = *dim;
      seeds.push_back({i, *dim, 1});
      // The state is laid out as its parameter (over tp), then split.
      if (Attribute layout =
              func.getArgAttr(param.getArgNumber(), kShardingAttrName);
          layout && !splitBefore)
        states.setArgAttr(i, kShardingAttrName, layout);
    }
    states.commit();

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (const auto &entry : padded) {
      StringRef name = entry.getKey();
      const Padding &padding = entry.getValue();
      if (failed(padUpdate(step, name, padding, dp)))
        return failure();
      InFlightDiagnostic remark =
          func.emitRemark("ZeRO: padded the optimizer state of '");
      remark << name << "' ";
      if (padding.dim != 0)
        remark << "along dimension " << padding.dim << " ";
      remark << "from " << padding.size << " to "
             << paddedShape(cast<ShapedType>(
                                getParameterArgument(func, name).getType()),
                            dp, padding.dim)[padding.dim]
             << (padding.dim == 0 ? " rows" : "") << ", a multiple of " << axis
             << "=" << dp;
    }

    // Each update reads this rank's part of its gradient.
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
                                   mesh, b.getStrArrayAttr({axis}),
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
      // The next value of a parameter's state.
      std::optional<unsigned> arg = step.getUpdatedArgument(i);
      const TrainingStep::State *state = arg ? step.getState(*arg) : nullptr;
      if (state && !state->getParam().empty())
        return splitOf(state->getParam());
      return std::nullopt;
    };
    std::string purpose = "ZeRO-" + std::to_string(stage);
    if (failed(partitionOverAxis(func, dp, mesh, axis, purpose, seeds,
                                 resultSplit)))
      return failure();
    SignatureEditor signature(func);
    for (const SplitArgument &seed : seeds)
      recordSharding(signature, seed.index, mesh, seed.dim, axis);
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      if (auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName)) {
        if (std::optional<SplitArgument> split = splitOf(grad.getValue())) {
          const TrainingStep::Parameter *param =
              step.getParameter(grad.getValue());
          recordResultSharding(signature, i,
                               param ? std::optional<unsigned>(param->argument)
                                     : std::nullopt,
                               mesh, split->dim, axis);
        }
        if (auto it = padded.find(grad.getValue()); it != padded.end()) {
          signature.setResultAttr(i, kUnpaddedRowsAttrName,
                                  b.getI64IntegerAttr(it->second.size));
          if (it->second.dim != 0)
            signature.setResultAttr(i, kPaddedDimAttrName,
                                    b.getI64IntegerAttr(it->second.dim));
        }
      }
      // A padded parameter's update: its leading part.
      std::optional<unsigned> arg = step.getUpdatedArgument(i);
      auto param = arg ? func.getArgAttrOfType<StringAttr>(*arg, kParamAttrName)
                       : StringAttr();
      auto it = param ? padded.find(param.getValue()) : padded.end();
      if (it == padded.end())
        continue;
      OpOperand &operand = ret->getOpOperand(i);
      b.setInsertionPoint(ret);
      operand.set(unpaddedPart(b, operand.get(), it->second));
    }
    signature.commit();
    // The microbatches dtc-gradient-accumulation made.
    if (stage >= 2 && step.getAttr().getMicrobatches() > 1)
      scatterPerMicrobatch(func);
    if (stage == 3)
      shardParameters(step, dp, mesh, dims, padded);
    return success();
  }

  /// The dimension along which `param` can be padded: its first that no
  /// other axis splits (padding one that is split would put zeros inside
  /// every other axis's part), if any.
  static std::optional<int64_t> padDim(func::FuncOp func, BlockArgument param) {
    auto type = cast<RankedTensorType>(param.getType());
    auto sharding = func.getArgAttrOfType<ShardingAttr>(param.getArgNumber(),
                                                        kShardingAttrName);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!sharding || sharding.axesOf(d).empty())
        return d;
    return std::nullopt;
  }

  static SmallVector<int64_t> paddedShape(ShapedType type, int64_t dp,
                                          int64_t dim) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = (shape[dim] + dp - 1) / dp * dp;
    return shape;
  }

  static void recordPadding(SignatureEditor &signature, unsigned arg,
                            const Padding &padding) {
    Builder b(signature.getFunction().getContext());
    signature.setArgAttr(arg, kUnpaddedRowsAttrName,
                         b.getI64IntegerAttr(padding.size));
    if (padding.dim != 0)
      signature.setArgAttr(arg, kPaddedDimAttrName,
                           b.getI64IntegerAttr(padding.dim));
  }

  /// `value` without its padding: its first `padding.size` entries along
  /// `padding.dim`.
  static Value unpaddedPart(OpBuilder &b, Value value, const Padding &padding) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> starts(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    sizes[padding.dim] = padding.size;
    return SliceOp::create(b, value.getLoc(), value, starts, sizes, strides);
  }

  /// Makes the update of parameter `name` (whose state is padded already)
  /// work on padded values: from its results back through the elementwise
  /// arithmetic of the update, the values shaped as the parameter take the
  /// padded shape, and what they are made from -- the parameter, the
  /// gradient's all-reduce input, anything else -- gets zero rows
  /// appended. Other readers of the retyped values (the sums of squares of
  /// --clip-grad-norm, fp16's overflow count) take the new types; the zero
  /// rows add nothing to them.
  LogicalResult padUpdate(const TrainingStep &step, StringRef name,
                          const Padding &padding, int64_t dp) {
    func::FuncOp func = step.getFunction();
    BlockArgument param = getParameterArgument(func, name);
    auto whole = cast<RankedTensorType>(param.getType());
    SmallVector<int64_t> shape = paddedShape(whole, dp, padding.dim);
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(&getContext());
    auto unpadded = [&](Value value) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      return type && type.getShape() == whole.getShape();
    };
    auto retype = [&](Value value) {
      value.setType(cast<RankedTensorType>(value.getType()).clone(shape));
    };
    llvm::DenseMap<Value, Value> pads;
    auto padOf = [&](Value value) -> Value {
      Value &pad = pads[value];
      if (pad)
        return pad;
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<int64_t> zerosShape(type.getShape());
      zerosShape[padding.dim] = shape[padding.dim] - padding.size;
      b.setInsertionPointAfterValue(value);
      auto zerosType = type.clone(zerosShape);
      Value zeros = ConstantOp::create(
          b, value.getLoc(),
          DenseElementsAttr::get(zerosType,
                                 b.getZeroAttr(type.getElementType())));
      auto concat = ConcatOp::create(b, value.getLoc(),
                                     ValueRange{value, zeros}, padding.dim);
      concat->setAttr(kPaddingAttrName, b.getUnitAttr());
      pad = concat;
      return pad;
    };
    auto elementwise = [&](Operation *op) {
      return isElementwise(op) &&
             llvm::all_of(op->getOperands(), [&](Value operand) {
               auto type = cast<RankedTensorType>(operand.getType());
               return type.getRank() == 0 || unpadded(operand) ||
                      type.getShape() == ArrayRef<int64_t>(shape);
             });
    };
    llvm::DenseSet<Operation *> walked;
    std::function<void(OpOperand &)> visit = [&](OpOperand &use) {
      Value value = use.get();
      if (!unpadded(value))
        return; // a scalar, or padded already
      Operation *def = value.getDefiningOp();
      if (def && walked.contains(def))
        return;
      if (auto sum = dyn_cast_or_null<AllReduceOp>(def)) {
        // Padding before the sum, so that it can become a reduce-scatter.
        walked.insert(def);
        retype(value);
        sum.getInputMutable().assign(padOf(sum.getInput()));
        return;
      }
      if (!def || !elementwise(def)) {
        use.set(padOf(value));
        return;
      }
      walked.insert(def);
      retype(value);
      for (OpOperand &operand : def->getOpOperands())
        visit(operand);
    };
    // The next values of the parameter and of its state.
    for (OpOperand &operand : ret->getOpOperands()) {
      std::optional<unsigned> arg =
          step.getUpdatedArgument(operand.getOperandNumber());
      const TrainingStep::State *state = arg ? step.getState(*arg) : nullptr;
      if (arg && (*arg == param.getArgNumber() ||
                  (state && state->getParam() == name)))
        visit(operand);
    }
    // The gradient result is returned padded (dumps strip it).
    for (OpOperand &operand : ret->getOpOperands()) {
      auto grad = func.getResultAttrOfType<StringAttr>(
          operand.getOperandNumber(), kGradAttrName);
      if (grad && grad.getValue() == name && unpadded(operand.get()))
        operand.set(padOf(operand.get()));
    }
    // The parameter padded where the update first reads it, not for the
    // whole step.
    if (Value pad = pads.lookup(param)) {
      Operation *first = *pad.getUsers().begin();
      for (Operation *user : pad.getUsers())
        if (user->isBeforeInBlock(first))
          first = user;
      pad.getDefiningOp()->getOperand(1).getDefiningOp()->moveBefore(first);
      pad.getDefiningOp()->moveBefore(first);
    }
    // Other readers of what was retyped follow.
    SmallVector<Value> work;
    for (Operation *op : walked)
      work.push_back(op->getResult(0));
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (walked.contains(user) || isa<func::ReturnOp, ConcatOp>(user))
          continue;
        if (failed(reinferResultTypes(user, work)))
          return user->emitError("ZeRO: cannot pad the update of '")
                 << name << "' through '" << user->getName() << "'";
        walked.insert(user);
      }
    }
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
    // What each microbatch's gradient goes through before its scatter, as
    // the sum did: a padding with zero rows, a cast to bf16 (the shards
    // then add up in f32 and are cast once).
    SmallVector<Operation *> wrappers;
    CastOp narrow;
    std::function<Value(Value, ReduceScatterOp)> distribute =
        [&](Value sum, ReduceScatterOp like) -> Value {
      auto add = sum.getDefiningOp<AddOp>();
      if (!add || !add->hasAttr(kMicrobatchSumAttrName) || !add->hasOneUse()) {
        b.setInsertionPointAfterValue(sum);
        for (Operation *wrapper : llvm::reverse(wrappers)) {
          IRMapping map;
          map.map(wrapper->getOperand(0), sum);
          for (Value operand : llvm::drop_begin(wrapper->getOperands()))
            map.map(operand, b.clone(*operand.getDefiningOp())->getResult(0));
          sum = b.clone(*wrapper, map)->getResult(0);
        }
        auto part = cast<ReduceScatterOp>(b.clone(*like));
        part->setOperand(0, sum);
        if (!narrow)
          return part.getResult();
        auto wide =
            part.getType().clone(narrow.getInput().getType().getElementType());
        return CastOp::create(b, part.getLoc(), wide, part);
      }
      Value lhs = distribute(add.getLhs(), like);
      Value rhs = distribute(add.getRhs(), like);
      b.setInsertionPointAfter(add);
      auto shards = AddOp::create(b, add.getLoc(), lhs, rhs);
      shards->setAttr(kMicrobatchSumAttrName, b.getUnitAttr());
      return shards.getResult();
    };
    for (ReduceScatterOp scatter : scatters) {
      wrappers.clear();
      narrow = {};
      Value input = scatter.getInput();
      for (Operation *def = input.getDefiningOp(); def && def->hasOneUse();
           def = input.getDefiningOp()) {
        auto cast = dyn_cast<CastOp>(def);
        bool padding = def->hasAttr(kPaddingAttrName);
        bool narrowing = cast && !narrow &&
                         cast.getType().getElementTypeBitWidth() <
                             cast.getInput().getType().getElementTypeBitWidth();
        if (!padding && !narrowing)
          break;
        if (narrowing)
          narrow = cast;
        wrappers.push_back(def);
        input = def->getOperand(0);
      }
      auto add = input.getDefiningOp<AddOp>();
      if (!add || !add->hasAttr(kMicrobatchSumAttrName) || !add->hasOneUse())
        continue;
      Value shards = distribute(input, scatter);
      if (narrow) {
        b.setInsertionPointAfterValue(shards);
        shards = CastOp::create(b, scatter.getLoc(), scatter.getType(), shards);
      }
      scatter.getResult().replaceAllUsesWith(shards);
      scatter.erase();
      for (Operation *wrapper : wrappers)
        wrapper->erase();
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
  /// that neither gather lives from the forward into the backward (here one
  /// parameter each; dtc-bucket-gradients groups them into units).
  /// Collectives have side effects: no CSE merges or hoists them.
  void shardParameters(const TrainingStep &step, int64_t dp,
                       FlatSymbolRefAttr mesh,
                       const llvm::StringMap<int64_t> &dims,
                       const llvm::StringMap<Padding> &padded) {
    func::FuncOp func = step.getFunction();
    llvm::DenseSet<Operation *> forward = forwardOps(func);
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    OpBuilder b(&getContext());
    SignatureEditor signature(func);
    for (BlockArgument param : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(param.getArgNumber(),
                                                    kParamAttrName);
      auto it = name ? dims.find(name.getValue()) : dims.end();
      if (it == dims.end() || it->second < 0)
        continue;
      int64_t dim = it->second;
      auto whole = cast<RankedTensorType>(param.getType());
      auto rows = padded.find(name.getValue());
      // A padded parameter is kept as its shard of the padded whole.
      auto gatheredType =
          rows == padded.end()
              ? whole
              : whole.clone(paddedShape(whole, dp, rows->second.dim));
      SmallVector<int64_t> shape(gatheredType.getShape());
      shape[dim] /= dp;
      param.setType(whole.clone(shape));
      if (rows != padded.end())
        recordPadding(signature, param.getArgNumber(), rows->second);

      // The update: its shard is the next step's parameter.
      if (std::optional<unsigned> update =
              step.getUpdate(param.getArgNumber())) {
        OpOperand &operand = ret->getOpOperand(*update);
        Value value = operand.get();
        if (auto first = value.getDefiningOp<SliceOp>();
            first && rows != padded.end())
          value = first.getInput();
        if (auto gather = value.getDefiningOp<AllGatherOp>()) {
          Value old = operand.get();
          operand.set(gather.getInput());
          if (Operation *slice = old.getDefiningOp();
              slice != gather && slice->use_empty())
            slice->erase();
          if (gather->use_empty())
            gather.erase();
        }
      }

      // The optimizer's slices of the whole parameter (padded) are the
      // parameter.
      SmallVector<Value> wholes{param};
      for (Operation *user : param.getUsers())
        if (user->hasAttr(kPaddingAttrName) && rows != padded.end())
          wholes.push_back(user->getResult(0));
      llvm::SmallPtrSet<Operation *, 4> readsShard;
      auto isShard = [&](Operation *op) {
        auto shard = dyn_cast<ShardOp>(op);
        return shard && static_cast<int64_t>(shard.getDim()) == dim &&
               shard.getBlocks() == 1;
      };
      for (Value value : wholes)
        for (Operation *user : SmallVector<Operation *>(value.getUsers())) {
          if (isShard(user)) {
            for (Operation *reader : user->getResult(0).getUsers())
              readsShard.insert(reader);
            user->getResult(0).replaceAllUsesWith(param);
            user->erase();
            continue;
          }
          // The shard of an elementwise op of it and scalars (AdamW's
          // decay) is that op of the shard: no whole read.
          if (!isElementwise(user) || !user->hasOneUse() ||
              !isShard(*user->getUsers().begin()) ||
              !llvm::all_of(user->getOperands(), [&](Value operand) {
                return operand == value ||
                       cast<RankedTensorType>(operand.getType()).getRank() == 0;
              }))
            continue;
          Operation *shard = *user->getUsers().begin();
          readsShard.insert(user);
          if (value != param)
            user->replaceUsesOfWith(value, param);
          user->getResult(0).setType(shard->getResult(0).getType());
          shard->getResult(0).replaceAllUsesWith(user->getResult(0));
          shard->erase();
        }
      for (Value value : llvm::drop_begin(wholes))
        if (value.use_empty())
          value.getDefiningOp()->erase();

      // The forward's and the backward's reads of it and of its views.
      SmallVector<OpOperand *> forwardUses, backwardUses;
      SmallVector<Value> work{param};
      while (!work.empty()) {
        Value value = work.pop_back_val();
        for (OpOperand &use : value.getUses()) {
          Operation *user = use.getOwner();
          if (readsShard.contains(user))
            continue;
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
      std::optional<Padding> unpadded;
      if (rows != padded.end())
        unpadded = rows->second;
      Value forwardWhole =
          gatherBefore(b, param, gatheredType, dim, mesh, forwardUses,
                       why + "forward", "forward", unpadded);
      for (OpOperand *use : forwardUses)
        use->set(forwardWhole);
      // Views for the backward are made again from its own gather.
      Value backwardWhole =
          gatherBefore(b, param, gatheredType, dim, mesh, backwardUses,
                       why + "backward", "backward", unpadded);
      llvm::DenseMap<Value, Value> again;
      again[param] = backwardWhole;
      if (forwardWhole)
        again[forwardWhole] = backwardWhole;
      for (OpOperand *use : backwardUses)
        use->set(remake(b, use->get(), again, backwardWhole));
      recordSharding(signature, param.getArgNumber(), mesh, dim, axis);
    }
    signature.commit();
  }

  /// An all-gather of `param` right before the first of `uses`, marked with
  /// its phase for bucketing (and without its padding).
  Value gatherBefore(OpBuilder &b, Value param, RankedTensorType whole,
                     int64_t dim, FlatSymbolRefAttr mesh,
                     ArrayRef<OpOperand *> uses, const std::string &why,
                     StringRef phase, std::optional<Padding> unpadded) {
    if (uses.empty())
      return {};
    Operation *first = uses.front()->getOwner();
    for (OpOperand *use : uses)
      if (use->getOwner()->isBeforeInBlock(first))
        first = use->getOwner();
    b.setInsertionPoint(first);
    auto gather = AllGatherOp::create(
        b, first->getLoc(), whole, param, mesh, b.getStrArrayAttr({axis}),
        b.getI64IntegerAttr(dim), b.getStringAttr(why));
    gather->setAttr(kGatherPhaseAttrName, b.getStringAttr(phase));
    return unpadded ? unpaddedPart(b, gather, *unpadded) : gather.getResult();
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

//===- SinkShards.cpp - compute a rank's part rather than the whole -------===//
//
// The partitioners cut a rank's part (`dtc.shard`) out of a replicated value
// where it meets a split one. When every rank made that value without
// communication from what every rank has -- iotas, constants, broadcasts,
// elementwise arithmetic and comparisons on them -- each rank can compute
// just its part: the cut moves up through those ops to the iotas, each
// rank's iota starting at its chunk's first index, and the whole is never
// made. The case that matters is the vocabulary-parallel cross-entropy's
// one-hot of the labels, [batch, sequence, vocabulary] integers and masks
// on every rank where its part is vocabulary/tp wide.
//
// Its backward also sums the one-hot selection of the loss gradient over
// the vocabulary, a reader of the whole that would keep it: that sum is the
// selected value itself where the label is in range, and is rewritten so.
// A batch partitioner's slice of an iota or a broadcast (rows all equal)
// is the iota or broadcast of the slice's shape. A cut that reaches an
// all-reduce whose readers all keep the same part makes it a reduce-scatter;
// cuts along one dimension of an all-gather along another make it an
// all-to-all. An all-gather of repeated rows gathers before the repeat.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Parallel/Passes.h"

#include "Partitioner.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_SINKSHARDS
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// shard(f(x, y, ...)) -> f(shard(x), shard(y), ...) for f an iota, a splat
/// constant, a broadcast or an elementwise op, when every reader of f's
/// result takes the same part.
struct SinkShard : OpRewritePattern<ShardOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ShardOp shard,
                                PatternRewriter &rewriter) const override {
    Value whole = shard.getInput();
    Operation *def = whole.getDefiningOp();
    if (!def || shard.getBlocks() != 1)
      return failure();
    for (Operation *user : whole.getUsers()) {
      auto other = dyn_cast<ShardOp>(user);
      if (!other || other.getMeshAttr() != shard.getMeshAttr() ||
          other.getAxes() != shard.getAxes() ||
          other.getDim() != shard.getDim() || other.getBlocks() != 1)
        return failure();
    }
    int64_t dim = shard.getDim();
    auto wholeType = cast<RankedTensorType>(whole.getType());
    RankedTensorType partType = shard.getType();
    Location loc = shard.getLoc();
    // An operand's part: itself if it is the same along `dim` everywhere.
    auto part = [&](Value operand) -> Value {
      auto type = cast<RankedTensorType>(operand.getType());
      if (type.getRank() == 0 || type.getDimSize(dim) == 1)
        return operand;
      SmallVector<int64_t> shape(type.getShape());
      shape[dim] = partType.getDimSize(dim);
      return ShardOp::create(rewriter, loc, type.clone(shape), operand,
                             shard.getMeshAttr(), shard.getAxes(),
                             shard.getDimAttr(), shard.getBlocksAttr(),
                             shard.getReasonAttr());
    };
    auto sameAlongDim = [&](Value operand) {
      auto type = cast<RankedTensorType>(operand.getType());
      return type.getRank() == 0 ||
             (type.getRank() == wholeType.getRank() &&
              (type.getDimSize(dim) == 1 ||
               type.getDimSize(dim) == wholeType.getDimSize(dim)));
    };

    if (auto iota = dyn_cast<IotaOp>(def)) {
      // A 1-D iota along the split is where chunk starts come from.
      if (wholeType.getRank() == 1)
        return failure();
      // Thin, as the canonicalizer makes iotas, with the chunk's start added
      // before the broadcast (which readers that broadcast absorb).
      int64_t along = iota.getDim();
      SmallVector<int64_t> thin(partType.getRank(), 1);
      thin[along] = partType.getDimSize(along);
      Value local = IotaOp::create(rewriter, loc, partType.clone(thin), along);
      if (along == dim)
        local = AddOp::create(
            rewriter, loc, local,
            chunkStart(rewriter, loc, partType.getDimSize(dim),
                       wholeType.getDimSize(dim) / partType.getDimSize(dim),
                       partType.getElementType(), shard.getMeshAttr(),
                       shard.getAxes()));
      rewriter.replaceOpWithNewOp<BroadcastOp>(shard, partType, local);
      return success();
    }
    DenseElementsAttr splat;
    if (matchPattern(whole, m_Constant(&splat)) && splat.isSplat()) {
      rewriter.replaceOpWithNewOp<ConstantOp>(shard,
                                              splat.resizeSplat(partType));
      return success();
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(def)) {
      if (!sameAlongDim(broadcast.getInput()) ||
          cast<RankedTensorType>(broadcast.getInput().getType()).getRank() == 0)
        return failure();
      rewriter.replaceOpWithNewOp<BroadcastOp>(shard, partType,
                                               part(broadcast.getInput()));
      return success();
    }
    if (!isElementwise(def) || def->getNumRegions() ||
        !llvm::all_of(def->getOperands(), sameAlongDim))
      return failure();
    SmallVector<Value> operands;
    for (Value operand : def->getOperands())
      operands.push_back(part(operand));
    Operation *local = rewriter.clone(*def);
    local->setOperands(operands);
    local->getResult(0).setType(partType);
    rewriter.replaceOp(shard, local->getResults());
    return success();
  }
};

/// reduce_sum(select(iota == y, x, 0), dim) -> select(0 <= y < n, x, 0), for
/// an iota of n along the summed dimension and x, y the same along it: one
/// element of each row is selected, if y is in range.
struct SumOfOneHot : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceSumOp sum,
                                PatternRewriter &rewriter) const override {
    auto select = sum.getInput().getDefiningOp<SelectOp>();
    if (!select || sum.getDims().size() != 1)
      return failure();
    int64_t dim = sum.getDims()[0];
    auto type = cast<RankedTensorType>(select.getType());
    auto compare = select.getCond().getDefiningOp<CompareOp>();
    if (!compare || compare.getPredicate() != ComparisonPredicate::EQ)
      return failure();
    Value labels = compare.getRhs();
    auto iota = compare.getLhs().getDefiningOp<IotaOp>();
    if (!iota) {
      iota = compare.getRhs().getDefiningOp<IotaOp>();
      labels = compare.getLhs();
    }
    auto oneAlongDim = [&](Value value) {
      auto t = cast<RankedTensorType>(value.getType());
      return t.getRank() == type.getRank() && t.getDimSize(dim) == 1;
    };
    Value picked = select.getOnTrue();
    if (auto broadcast = picked.getDefiningOp<BroadcastOp>();
        broadcast && oneAlongDim(broadcast.getInput()))
      picked = broadcast.getInput();
    DenseElementsAttr zero;
    if (!iota || static_cast<int64_t>(iota.getDim()) != dim ||
        iota.getType() != compare.getLhs().getType() ||
        cast<RankedTensorType>(iota.getType()).getShape() != type.getShape() ||
        !oneAlongDim(labels) || !oneAlongDim(picked) ||
        !matchPattern(select.getOnFalse(), m_Constant(&zero)) ||
        !zero.isSplat() || !isZero(zero))
      return failure();

    Location loc = sum.getLoc();
    auto labelType = cast<RankedTensorType>(labels.getType());
    auto scalar = [&](int64_t value) -> Value {
      auto scalarType = RankedTensorType::get({}, labelType.getElementType());
      return ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(
              scalarType,
              rewriter.getIntegerAttr(labelType.getElementType(), value)));
    };
    Value inRange =
        AndOp::create(rewriter, loc,
                      CompareOp::create(rewriter, loc, ComparisonPredicate::GE,
                                        labels, scalar(0)),
                      CompareOp::create(rewriter, loc, ComparisonPredicate::LT,
                                        labels, scalar(type.getDimSize(dim))));
    Value result =
        SelectOp::create(rewriter, loc, inRange, picked, select.getOnFalse());
    auto kept = cast<RankedTensorType>(result.getType());
    SmallVector<int64_t> keptShape(type.getShape());
    keptShape[dim] = 1;
    if (kept.getShape() != ArrayRef<int64_t>(keptShape))
      result =
          BroadcastOp::create(rewriter, loc, kept.clone(keptShape), result);
    if (result.getType() != sum.getType())
      result = ReshapeOp::create(rewriter, loc, sum.getType(), result);
    rewriter.replaceOp(sum, result);
    return success();
  }

  static bool isZero(DenseElementsAttr splat) {
    if (isa<FloatType>(splat.getElementType()))
      return splat.getSplatValue<APFloat>().isZero();
    return splat.getSplatValue<APInt>().isZero();
  }
};

/// A sum every reader of which now keeps the same part (the cut moved up
/// to it, through fp16's unscaling of a ZeRO gradient say) is a
/// reduce-scatter.
struct ScatterInsteadOfSum : OpRewritePattern<AllReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllReduceOp sum,
                                PatternRewriter &rewriter) const override {
    return scatterInsteadOfSum(sum, rewriter);
  }
};

/// A gather along one dimension every reader of which keeps its part
/// along another (a split moved from one dimension to another: the
/// partitioner gathered for an op that needed the value whole along the
/// first, and a later reader cuts it along the second) is an all-to-all:
/// each rank sends every other rank that one's part of its own chunk, a
/// 1/n of the bytes the gather moved. (Cuts along the gathered dimension
/// read what the rank had.)
struct AllToAllInsteadOfGather : OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllGatherOp gather,
                                PatternRewriter &rewriter) const override {
    SmallVector<ShardOp> cuts;
    for (Operation *user : gather->getUsers()) {
      auto cut = dyn_cast<ShardOp>(user);
      if (!cut || cut.getMeshAttr() != gather.getMeshAttr() ||
          cut.getAxes() != gather.getAxes() || cut.getBlocks() != 1 ||
          (!cuts.empty() && cut.getDim() != cuts.front().getDim()))
        return failure();
      cuts.push_back(cut);
    }
    if (cuts.empty())
      return failure();
    ShardOp first = cuts.front();
    // Cut along the gathered dimension: each rank's own part, as it was.
    if (first.getDim() == gather.getDim()) {
      for (ShardOp cut : cuts)
        rewriter.replaceOp(cut, gather.getInput());
      rewriter.eraseOp(gather);
      return success();
    }
    std::string reason =
        (gather.getReason() ? gather.getReason()->str() + "; " : "") +
        "every reader keeps its part along dimension " +
        std::to_string(first.getDim()) + ": an all-to-all";
    auto exchange = AllToAllOp::create(
        rewriter, gather.getLoc(), first.getType(), gather.getInput(),
        gather.getMeshAttr(), gather.getAxes(), first.getDimAttr(),
        gather.getDimAttr(), rewriter.getStringAttr(reason),
        /*rows_dim=*/nullptr);
    if (gather->hasAttr(kReshardingAttrName))
      exchange->setAttr(kReshardingAttrName, rewriter.getUnitAttr());
    for (ShardOp cut : cuts)
      rewriter.replaceOp(cut, exchange.getResult());
    rewriter.eraseOp(gather);
    return success();
  }
};

/// The first dimension of `shape` that is not 1 (the one a flat buffer's
/// equal contiguous chunks split), if any.
static std::optional<int64_t> outermost(ArrayRef<int64_t> shape) {
  for (auto [d, size] : llvm::enumerate(shape))
    if (size != 1)
      return d;
  return std::nullopt;
}

/// all_gather of reshapes and broadcasts of x, along the outermost
/// dimension -> the same reshapes and broadcasts of all_gather(x), where
/// every broadcast repeats only dimensions inside the outermost one: each
/// rank's chunk of the result is then the chain applied to its chunk of x,
/// so the gather moves x rather than its repeats (the tokens of Mixtral's
/// padded dispatch, not their k copies).
struct GatherBeforeRepeat : OpRewritePattern<AllGatherOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AllGatherOp gather,
                                PatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(gather.getInput().getType());
    if (outermost(inputType.getShape()) != gather.getDim())
      return failure();
    int64_t ranks = gather.getType().getDimSize(gather.getDim()) /
                    inputType.getDimSize(gather.getDim());
    // The chain, from the gathered value back to x.
    SmallVector<Operation *> chain;
    Value x = gather.getInput();
    while (Operation *def = x.getDefiningOp()) {
      if (!isa<ReshapeOp, BroadcastOp>(def) ||
          (!chain.empty() && !chain.back()->getOperand(0).hasOneUse()))
        break;
      if (auto broadcast = dyn_cast<BroadcastOp>(def)) {
        ArrayRef<int64_t> in = broadcast.getInput().getType().getShape();
        ArrayRef<int64_t> out = broadcast.getType().getShape();
        int64_t offset = out.size() - in.size();
        std::optional<int64_t> outer = outermost(in);
        if (!outer ||
            llvm::any_of(out.take_front(offset),
                         [](int64_t size) { return size != 1; }) ||
            in.take_front(*outer + 1) !=
                out.drop_front(offset).take_front(*outer + 1))
          break;
      }
      chain.push_back(def);
      x = def->getOperand(0);
    }
    // Only a chain down to a broadcast is worth moving the gather past; x
    // is then the broadcast's input, whose outermost dimension it checked.
    while (!chain.empty() && !isa<BroadcastOp>(chain.back())) {
      x = chain.back()->getResult(0);
      chain.pop_back();
    }
    if (chain.empty())
      return failure();
    // Every value in the chain, ranks times larger along its outermost
    // dimension (the gathered value's is the gather's result).
    auto gathered = [&](Value value) -> RankedTensorType {
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[*outermost(shape)] *= ranks;
      return type.clone(shape);
    };
    int64_t xDim = *outermost(cast<RankedTensorType>(x.getType()).getShape());
    Value value = AllGatherOp::create(
        rewriter, gather.getLoc(), gathered(x), x, gather.getMeshAttr(),
        gather.getAxes(), rewriter.getI64IntegerAttr(xDim),
        rewriter.getStringAttr(
            (gather.getReason() ? gather.getReason()->str() + "; " : "") +
            "gathered before its repeats"));
    if (gather->hasAttr(kReshardingAttrName))
      value.getDefiningOp()->setAttr(kReshardingAttrName,
                                     rewriter.getUnitAttr());
    for (Operation *op : llvm::reverse(chain)) {
      RankedTensorType type = gathered(op->getResult(0));
      value =
          isa<BroadcastOp>(op)
              ? Value(BroadcastOp::create(rewriter, op->getLoc(), type, value))
              : Value(ReshapeOp::create(rewriter, op->getLoc(), type, value));
    }
    rewriter.replaceOp(gather, value);
    return success();
  }
};

/// slice(broadcast(x)) -> broadcast(x) to the slice's shape, when the slice
/// cuts only dimensions the broadcast made (x has 1 or nothing there): all
/// their rows are equal, so any of them are the first ones. (A batch
/// partitioner's rows of the cross-entropy's [batch, sequence, vocabulary]
/// index grid, which would otherwise be made whole.)
struct SliceOfBroadcast : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto broadcast = slice.getInput().getDefiningOp<BroadcastOp>();
    if (!broadcast)
      return failure();
    ArrayRef<int64_t> in =
        cast<RankedTensorType>(broadcast.getInput().getType()).getShape();
    ArrayRef<int64_t> whole = broadcast.getType().getShape();
    auto sliced = cast<RankedTensorType>(slice.getType());
    int64_t offset = whole.size() - in.size();
    for (auto [d, size] : llvm::enumerate(sliced.getShape())) {
      int64_t dim = d;
      bool broadcastHere = dim < offset || in[dim - offset] == 1;
      if (size != whole[dim] &&
          (!broadcastHere || slice.getStrides()[dim] != 1))
        return failure();
    }
    rewriter.replaceOpWithNewOp<BroadcastOp>(slice, sliced,
                                             broadcast.getInput());
    return success();
  }
};

/// slice(iota) -> iota of the slice's shape, when the slice starts at 0
/// along the iota's dimension (rows along the others are all equal).
struct SliceOfIota : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto iota = slice.getInput().getDefiningOp<IotaOp>();
    if (!iota)
      return failure();
    int64_t dim = iota.getDim();
    if (slice.getStarts()[dim] != 0 || slice.getStrides()[dim] != 1)
      return failure();
    rewriter.replaceOpWithNewOp<IotaOp>(slice, slice.getType(), dim);
    return success();
  }
};

struct SinkShardsPass : public dtc::impl::SinkShardsBase<SinkShardsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns
        .add<SinkShard, SliceOfBroadcast, SliceOfIota, SumOfOneHot,
             ScatterInsteadOfSum, AllToAllInsteadOfGather, GatherBeforeRepeat>(
            &getContext());
    // Each sweep sinks a shard one op further: a long chain of small ops
    // (a pool's window slices) takes more than the default 10.
    GreedyRewriteConfig config;
    config.setMaxIterations(1000);
    // (A step is one block: nothing for region simplification to do but
    // walk it again each sweep.)
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config))) {
      getOperation().emitError("dtc-sink-shards: the rewrites did not "
                               "converge");
      return signalPassFailure();
    }
  }
};

} // namespace

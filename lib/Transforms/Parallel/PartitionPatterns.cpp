//===- PartitionPatterns.cpp - the engine's named patterns ----------------===//
//
// The cases no sharding rule states, because they build new ops or need
// the engine's state:
//  - vocabulary-parallel embedding gradients (a scatter whose result the
//    caller wants split by rows is born split),
//  - shards the caller placed (a rank's part, chosen before partitioning),
//  - vocabulary-parallel cross-entropy (a log-softmax over a split
//    vocabulary) and embedding lookups (a gather from a table split by
//    rows),
//  - dropout on parts of a tensor (its mask is drawn by global indices),
//    attention's dropout too,
//  - grouped-query attention on more ranks than key/value heads.
// Sequence parallelism's reduce-scatters are the engine's own
// (AxisPartitioner::sumOverAxis).
//
//===----------------------------------------------------------------------===//

#include "AxisPartitioner.h"
#include "RingAttention.h"

#include "dtc/Dialect/DTC/IR/DTCLocations.h"
#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dtc;

namespace {

//===----------------------------------------------------------------------===//
// Vocabulary parallelism
//===----------------------------------------------------------------------===//

/// For `ids` into a table whose `rows` rows per rank are split over the
/// axis: the ids relative to this rank's first row, zero where they fall
/// outside it, and where they fall inside.
std::pair<Value, Value> localRows(AxisPartitioner &p, Value ids, int64_t rows,
                                  Location loc) {
  OpBuilder &b = p.builder();
  OpEmitter e(b, loc);
  Type idType = cast<RankedTensorType>(ids.getType()).getElementType();
  // A negative id counts from the end of the whole table (as ONNX's Gather
  // and the reference kernel read it): made positive before the cut, or
  // no rank would hold its row (the sharding conformance suite's
  // test_gather_negative_indices under mpirun found this).
  Value whole = p.scalar(loc, idType, rows * p.getRanks());
  ids = SelectOp::create(
      b, loc,
      CompareOp::create(b, loc, ComparisonPredicate::LT, ids,
                        p.scalar(loc, idType, 0)),
      e.add(ids, whole), ids);
  Value local = e.sub(ids, p.chunkStart(rows, idType, loc));
  Value inside =
      AndOp::create(b, loc,
                    CompareOp::create(b, loc, ComparisonPredicate::GE, local,
                                      p.scalar(loc, idType, 0)),
                    CompareOp::create(b, loc, ComparisonPredicate::LT, local,
                                      p.scalar(loc, idType, rows)));
  Value safe =
      SelectOp::create(b, loc, inside, local, p.scalar(loc, idType, 0));
  return {safe, inside};
}

/// `inside` (the ids' shape) as a mask of rows of `like`.
Value rowMask(OpBuilder &b, Value inside, RankedTensorType like,
              Location loc) {
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(inside.getType()).getShape());
  shape.resize(like.getRank(), 1);
  return ReshapeOp::create(b, loc,
                           RankedTensorType::get(shape, b.getI1Type()), inside);
}

/// Whether `value` ends up (through adds, casts -- mixed precision's
/// widening and narrowing back -- and collectives over other axes) as a
/// result the caller wants split along dimension 0.
bool becomesRowSplitResult(AxisPartitioner &p, Value value) {
  OpBuilder &b = p.builder();
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<func::ReturnOp>(user)) {
      std::optional<SplitArgument> wanted =
          p.wantedResultSplit(use.getOperandNumber());
      if (wanted && wanted->dim == 0 && wanted->blocks == 1)
        return true;
    } else if ((isa<AddOp, CastOp>(user) ||
                (isa<AllReduceOp>(user) &&
                 !llvm::is_contained(cast<AllReduceOp>(user).getAxes(),
                                     b.getStringAttr(p.getAxis())))) &&
               cast<ShapedType>(user->getResult(0).getType()).getShape() ==
                   cast<ShapedType>(value.getType()).getShape() &&
               becomesRowSplitResult(p, user->getResult(0))) {
      return true;
    }
  }
  return false;
}

/// The gradient of a vocabulary-parallel embedding: each rank adds the
/// updates of its own rows into its part of the table, so that the
/// gradient is born split (and no rank builds the whole table).
bool matchesRowSplitScatter(AxisPartitioner &p, Operation *op) {
  auto scatter = dyn_cast<ScatterAddOp>(op);
  return scatter && !p.partitionsBatch() && scatter.getDim() == 0 &&
         p.layoutOf(scatter.getIndicesMutable()).isReplicated() &&
         isFloatZeros(scatter.getInput()) && becomesRowSplitResult(p, scatter);
}

LogicalResult partitionRowSplitScatter(AxisPartitioner &p, Operation *op,
                                       std::string &notApplicable) {
  auto scatter = cast<ScatterAddOp>(op);
  OpBuilder &b = p.builder();
  auto type = cast<RankedTensorType>(scatter.getType());
  int64_t ranks = p.getRanks();
  if (type.getDimSize(0) % ranks != 0) {
    notApplicable = "its rows do not divide over the ranks";
    return success();
  }
  if (p.layoutOf(scatter.getUpdatesMutable()).isSplit())
    p.gatherOperand(scatter.getUpdatesMutable(),
                    p.getPurpose() + ": " + describeOp(op) +
                        " adds every token's update into the rank's rows");
  if (p.isAnalysis())
    return p.split(scatter.getResult(), 0, op);
  b.setInsertionPoint(op);
  auto [safe, inside] = localRows(p, scatter.getIndices(),
                                  type.getDimSize(0) / ranks, op->getLoc());
  scatter.getIndicesMutable().assign(safe);
  auto updates = cast<RankedTensorType>(scatter.getUpdates().getType());
  scatter.getUpdatesMutable().assign(SelectOp::create(
      b, op->getLoc(), rowMask(b, inside, updates, op->getLoc()),
      scatter.getUpdates(),
      p.scalar(op->getLoc(), updates.getElementType(), 0)));
  auto table = cast<RankedTensorType>(scatter.getInput().getType());
  SmallVector<int64_t> shape(table.getShape());
  shape[0] /= ranks;
  scatter.getInputMutable().assign(ConstantOp::create(
      b, op->getLoc(),
      DenseElementsAttr::get(table.clone(shape),
                             b.getZeroAttr(table.getElementType()))));
  return p.split(scatter.getResult(), 0, op);
}

/// A log-softmax over the split dimension (the vocabulary-parallel
/// cross-entropy): each rank normalizes its part with the maximum and the
/// sum of exponentials all-reduced over the axis, never gathering the
/// logits -- two all-reduces of one value per row.
bool matchesSplitLogSoftmax(AxisPartitioner &p, Operation *op) {
  auto softmax = dyn_cast<LogSoftmaxOp>(op);
  if (!softmax || p.partitionsBatch())
    return false;
  AxisLayout in = p.layoutOf(softmax.getInputMutable());
  return in.isSplit() && in.dim == static_cast<int64_t>(softmax.getDim());
}

LogicalResult partitionSplitLogSoftmax(AxisPartitioner &p, Operation *op,
                                       std::string &) {
  auto softmax = cast<LogSoftmaxOp>(op);
  AxisLayout in = p.layoutOf(softmax.getInputMutable());
  int64_t dim = softmax.getDim();
  OpBuilder &b = p.builder();
  std::string what = p.getPurpose() + ": " + describeOp(op) +
                     " split over '" + p.getAxis().str() + "'";
  std::string maxWhy = what + ": the maximum of each row",
              sumWhy = what + ": the sum of exponentials of each row";
  if (p.isAnalysis()) {
    // Two all-reduces of one value per row.
    SmallVector<int64_t> rows(softmax.getType().getShape());
    rows[dim] = 1;
    auto rowType = softmax.getType().clone(rows);
    p.recordAllReduce(rowType, op->getLoc(), maxWhy, CollectiveReduction::Max);
    p.recordAllReduce(rowType, op->getLoc(), sumWhy, CollectiveReduction::Sum);
    p.setLayout(softmax.getResult(), in);
    return success();
  }
  b.setInsertionPoint(op);
  OpEmitter e(b, op->getLoc());
  Value x = softmax.getInput();
  Value max = p.allReduce(ReduceMaxOp::create(b, e.loc, x, {dim}, true), e.loc,
                          maxWhy, CollectiveReduction::Max)
                  .value;
  Value shifted = e.sub(x, max);
  Value sum =
      p.allReduce(ReduceSumOp::create(b, e.loc, e.exp(shifted), {dim}, true),
                  e.loc, sumWhy)
          .value;
  Value result = e.sub(shifted, e.log(sum));
  softmax.getResult().replaceAllUsesWith(result);
  op->erase();
  p.setLayout(result, in);
  return success();
}

/// A lookup in a table split along its rows (a vocabulary-parallel
/// embedding): each rank looks up the ids in its rows and zeros the others,
/// and the sum over the axis is the lookup.
bool matchesSplitTableGather(AxisPartitioner &p, Operation *op) {
  auto gather = dyn_cast<GatherOp>(op);
  if (!gather || p.partitionsBatch())
    return false;
  AxisLayout in = p.layoutOf(gather.getInputMutable());
  return p.layoutOf(gather.getIndicesMutable()).isReplicated() &&
         gather.getDim() == 0 && in.isSplit() && in.dim == 0 && in.blocks == 1;
}

LogicalResult partitionSplitTableGather(AxisPartitioner &p, Operation *op,
                                        std::string &) {
  auto gather = cast<GatherOp>(op);
  OpBuilder &b = p.builder();
  auto table = gather.getInput().getType();
  std::string why = p.getPurpose() + ": " + describeOp(op) +
                    " from rows split over '" + p.getAxis().str() +
                    "' (each rank has looked up its own)";
  if (p.isAnalysis()) {
    // Each rank's masked lookup, summed.
    p.sumResult(gather.getResult(), why);
    return success();
  }
  b.setInsertionPoint(op);
  auto [safe, inside] =
      localRows(p, gather.getIndices(), table.getDimSize(0), op->getLoc());
  gather.getIndicesMutable().assign(safe);
  b.setInsertionPointAfter(op);
  Value masked = SelectOp::create(
      b, op->getLoc(), rowMask(b, inside, gather.getType(), op->getLoc()),
      gather.getResult(),
      p.scalar(op->getLoc(), table.getElementType(), 0));
  Value whole = p.sumOverAxis(masked, op->getLoc(), why, /*mayScatter=*/true)
                    .value;
  gather.getResult().replaceAllUsesExcept(whole, masked.getDefiningOp());
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives over other axes
//===----------------------------------------------------------------------===//

/// The ranks of the group a gather, a shard or a reduce-scatter goes over
/// and its dimension, or nothing where it is over this axis.
std::optional<std::pair<int64_t, int64_t>> otherAxesGroup(AxisPartitioner &p,
                                                          Operation *op) {
  FlatSymbolRefAttr meshName;
  ArrayAttr axes;
  int64_t dim;
  if (auto gather = dyn_cast<AllGatherOp>(op)) {
    meshName = gather.getMeshAttr();
    axes = gather.getAxes();
    dim = gather.getDim();
  } else if (auto shard = dyn_cast<ShardOp>(op)) {
    meshName = shard.getMeshAttr();
    axes = shard.getAxes();
    dim = shard.getDim();
  } else if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
    meshName = scatter.getMeshAttr();
    axes = scatter.getAxes();
    dim = scatter.getDim();
  } else {
    return std::nullopt;
  }
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(op, meshName);
  if (!mesh)
    return std::nullopt;
  int64_t group = 1;
  for (Attribute axis : axes) {
    StringRef name = cast<StringAttr>(axis).getValue();
    if (name == p.getAxis() || mesh.axisSize(name) < 0)
      return std::nullopt;
    group *= mesh.axisSize(name);
  }
  return std::make_pair(group, dim);
}

/// An all-gather over other axes along the dimension this axis splits
/// (expert parallelism's gather of every group's tokens, which the
/// microbatches of gradient accumulation or a pipeline split): each of the
/// other axes' chunks holds this axis's blocks, so the result is split in
/// that many blocks times the group. And the way back, a shard or a
/// reduce-scatter over other axes along it (the experts' outputs returned
/// to their groups' ranks, its gradient): each chunk holds its share of
/// this axis's blocks, where the group divides them. Nothing to
/// communicate over this axis.
bool matchesCollectiveAlongSplit(AxisPartitioner &p, Operation *op) {
  auto group = otherAxesGroup(p, op);
  if (!group || group->first <= 1)
    return false;
  AxisLayout in = p.layoutOf(op->getOpOperand(0));
  return in.isSplit() && in.dim == group->second &&
         (isa<AllGatherOp>(op) || in.blocks % group->first == 0);
}

LogicalResult partitionCollectiveAlongSplit(AxisPartitioner &p, Operation *op,
                                            std::string &) {
  AxisLayout in = p.layoutOf(op->getOpOperand(0));
  int64_t group = otherAxesGroup(p, op)->first;
  return p.split(op->getResult(0), in.dim, op,
                 isa<AllGatherOp>(op) ? in.blocks * group : in.blocks / group);
}

//===----------------------------------------------------------------------===//
// Caller-placed shards
//===----------------------------------------------------------------------===//

/// A shard over this axis that the caller placed (ZeRO's cut of a
/// gradient): the rank's part along this axis. Shards with a reason come
/// from an earlier partition of the axis (the batch's rows of a constant)
/// and are the ranks' own values already.
bool matchesPlacedShard(AxisPartitioner &p, Operation *op) {
  auto shard = dyn_cast<ShardOp>(op);
  return shard && !shard.getReason() &&
         shard.getAxes() == p.builder().getStrArrayAttr({p.getAxis()}) &&
         !p.anyOperand(op, AxisLayout::Kind::Split);
}

LogicalResult partitionPlacedShard(AxisPartitioner &p, Operation *op,
                                   std::string &) {
  auto shard = cast<ShardOp>(op);
  p.setLayout(shard.getResult(),
              AxisLayout::split(shard.getDim(), shard.getBlocks()));
  if (p.isAnalysis())
    p.noteCut(shard.getInputMutable(), shard.getDim(), shard.getBlocks());
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// Dropout on a part of a tensor draws by the elements' indices in the
/// whole: the op learns the whole shape and where the part starts (this
/// rank's chunk along the split dimension, added to other axes' offsets),
/// so every layout draws one device's mask. `offset` is the op's offset
/// operand (`previous` its value, if any), `type` the part's type, split
/// along `dim`; `setWhole` records the whole shape.
void placeDropout(AxisPartitioner &p, Operation *op,
                  MutableOperandRange offset, Value previous,
                  RankedTensorType type, int64_t dim,
                  std::optional<ArrayRef<int64_t>> global,
                  llvm::function_ref<void(ArrayRef<int64_t>)> setWhole) {
  OpBuilder &b = p.builder();
  int64_t rank = type.getRank(), local = type.getDimSize(dim);
  SmallVector<int64_t> whole(type.getShape());
  whole[dim] *= p.getRanks();
  if (global)
    whole.assign(global->begin(), global->end());
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Type i64 = b.getI64Type();
  Value first = p.chunkStart(local, i64, loc);
  SmallVector<int64_t> unit(rank, 0);
  unit[dim] = 1;
  Value along = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({rank}, i64),
                             ArrayRef<int64_t>(unit)));
  Value placed = MulOp::create(b, loc, along, first);
  if (previous)
    placed = AddOp::create(b, loc, previous, placed);
  offset.assign(placed);
  setWhole(whole);
}

bool matchesDropout(AxisPartitioner &p, Operation *op) {
  return isa<DropoutOp>(op) && p.anyOperand(op, AxisLayout::Kind::Split);
}

LogicalResult partitionDropout(AxisPartitioner &p, Operation *op,
                               std::string &notApplicable) {
  auto dropout = cast<DropoutOp>(op);
  AxisLayout in = p.layoutOf(dropout.getInputMutable());
  if (p.isZigzag())
    return op->emitError(p.getPurpose() + ": ")
           << describeOp(op)
           << ": dropout on tokens in zigzag order (ring attention) is not "
              "placed yet: use --context-parallel all-gather or ulysses";
  if (!p.isRankIndexed())
    return op->emitError("dropout is not partitioned for gradient "
                         "accumulation yet (its microbatches have no rank "
                         "to index by)");
  if (!in.isSplit() || in.blocks != 1 ||
      !p.layoutOf(dropout.getStepMutable()).isReplicated()) {
    notApplicable = "its input is split in blocks, or its step is split";
    return success();
  }
  if (p.isAnalysis())
    return p.split(dropout.getResult(), in.dim, op);
  placeDropout(p, op, dropout.getOffsetMutable(), dropout.getOffset(),
               dropout.getInput().getType(), in.dim, dropout.getGlobalShape(),
               [&](ArrayRef<int64_t> whole) { dropout.setGlobalShape(whole); });
  return p.split(dropout.getResult(), in.dim, op);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Attention's dropout on a part of the probabilities, as dropout's: the
/// part is placed in the whole by its probabilities' layout.
void placeAttentionDropout(AxisPartitioner &p, AttentionOp op) {
  AxisLayout probs = p.layoutOf(op.getProbs());
  if (p.isAnalysis() || !op.getDropoutRatio() || !probs.isSplit())
    return;
  placeDropout(p, op, op.getOffsetMutable(), op.getOffset(),
               op.getProbs().getType(), probs.dim, op.getGlobalShape(),
               [&](ArrayRef<int64_t> whole) { op.setGlobalShape(whole); });
}

bool matchesAttentionDropout(AxisPartitioner &p, Operation *op) {
  auto attention = dyn_cast<AttentionOp>(op);
  return attention && attention.getDropoutRatio() &&
         p.anyOperand(op, AxisLayout::Kind::Split);
}

LogicalResult partitionAttentionDropout(AxisPartitioner &p, Operation *op,
                                        std::string &notApplicable) {
  if (!p.isRankIndexed())
    return op->emitError("dropout is not partitioned for gradient "
                         "accumulation yet (its microbatches have no rank "
                         "to index by)");
  if (failed(p.partitionByRule(op, notApplicable)))
    return failure();
  if (notApplicable.empty())
    placeAttentionDropout(p, cast<AttentionOp>(op));
  return success();
}

/// Grouped-query attention on more ranks than key/value heads (2 of them,
/// 4 ranks): each rank's query heads read one key/value head, which no
/// split of the kv heads gives. Each rank takes the heads it reads from the
/// repeated keys and values -- repeated as the op repeats them, then cut
/// like the query heads -- and runs attention without groups; a mask with
/// a heads dimension is cut like the query heads. Keys and values split
/// along the tokens (sequence parallelism's) are gathered first, for the
/// backward's reads too: attention reads all of them.
bool matchesUnevenKVHeads(AxisPartitioner &p, Operation *op) {
  auto attention = dyn_cast<AttentionOp>(op);
  if (!attention || p.partitionsBatch())
    return false;
  AxisLayout q = p.layoutOf(attention->getOpOperand(0));
  int64_t heads = attention.getQ().getType().getDimSize(1) * p.getRanks(),
          kvHeads = attention.getK().getType().getDimSize(1),
          group = heads / kvHeads, perRank = heads / p.getRanks();
  auto replicated = [&](unsigned i) {
    return p.layoutOf(attention->getOpOperand(i)).isReplicated();
  };
  auto wholeOrTokens = [&](unsigned i) {
    AxisLayout layout = p.layoutOf(attention->getOpOperand(i));
    return layout.isReplicated() || (layout.isSplit() && layout.dim == 2);
  };
  return q.isSplit() && q.dim == 1 && q.blocks == 1 && wholeOrTokens(1) &&
         wholeOrTokens(2) && (!attention.getMask() || replicated(3)) &&
         kvHeads % p.getRanks() != 0 && group % perRank == 0;
}

LogicalResult partitionUnevenKVHeads(AxisPartitioner &p, Operation *op,
                                     std::string &) {
  auto attention = cast<AttentionOp>(op);
  int64_t group = attention.getQ().getType().getDimSize(1) * p.getRanks() /
                  attention.getK().getType().getDimSize(1);
  OpBuilder &b = p.builder();
  for (unsigned i : {1u, 2u}) {
    OpOperand &use = op->getOpOperand(i);
    if (p.layoutOf(use).isSplit())
      p.gatherForLaterReaders(use, p.getPurpose() + ": " + describeOp(op) +
                                       " reads all the keys and values");
    if (!p.isAnalysis()) {
      b.setInsertionPoint(op);
      auto type = cast<RankedTensorType>(use.get().getType());
      ArrayRef<int64_t> s = type.getShape();
      Value one = ReshapeOp::create(
          b, op->getLoc(), type.clone({s[0], s[1], 1, s[2], s[3]}), use.get());
      Value many = BroadcastOp::create(
          b, op->getLoc(), type.clone({s[0], s[1], group, s[2], s[3]}), one);
      use.set(ReshapeOp::create(
          b, op->getLoc(), type.clone({s[0], s[1] * group, s[2], s[3]}),
          many));
    }
    if (failed(p.localize(use, 1)))
      return failure();
  }
  // A mask with a dimension of query heads (right-aligned against the
  // scores [batch, heads, queries, keys]) gives each rank its heads' part.
  if (attention.getMask()) {
    OpOperand &use = op->getOpOperand(3);
    auto type = cast<RankedTensorType>(use.get().getType());
    int64_t headsDim = type.getRank() - 3;
    int64_t heads = attention.getQ().getType().getDimSize(1) * p.getRanks();
    if (headsDim >= 0 && type.getDimSize(headsDim) == heads &&
        failed(p.localize(use, headsDim)))
      return failure();
  }
  for (Value result : op->getResults())
    if (failed(p.split(result, 1, op)))
      return failure();
  placeAttentionDropout(p, attention);
  return success();
}

//===----------------------------------------------------------------------===//
// Attention over a split of the tokens (context parallelism)
//===----------------------------------------------------------------------===//

bool splitAlongTokens(AxisPartitioner &p, OpOperand &use) {
  AxisLayout layout = p.layoutOf(use);
  return layout.isSplit() && layout.dim == 2 && layout.blocks == 1;
}

/// The dimension of a mask (right-aligned against the scores [batch,
/// heads, queries, keys]) that is scores dimension `d` of `size`, if any.
std::optional<int64_t> maskDim(Value mask, int64_t d, int64_t size) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t at = d - (4 - type.getRank());
  if (at < 0 || type.getDimSize(at) != size)
    return std::nullopt;
  return at;
}

/// `use`, laid out over the tokens' axis, gathered whole (for the readers
/// after its owner too: the backward of attention reads what the forward
/// did) and, with `heads`, cut to this rank's heads (dimension 1).
LogicalResult gatherTokens(AxisPartitioner &p, OpOperand &use,
                           const std::string &why, bool heads) {
  if (p.layoutOf(use).isSplit())
    p.gatherForLaterReaders(use, why);
  return heads ? p.localize(use, 1) : success();
}

/// [batch, heads * repeats, tokens, d] as [batch, heads, repeats, tokens,
/// d], summed over the repeats (or, `repeat`, the heads repeated so).
Value repeatHeads(OpBuilder &b, Location loc, Value x, int64_t repeats,
                  bool repeat) {
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> s = type.getShape();
  int64_t heads = repeat ? s[1] : s[1] / repeats;
  auto split = type.clone({s[0], heads, repeats, s[2], s[3]});
  if (!repeat)
    return ReduceSumOp::create(b, loc, ReshapeOp::create(b, loc, split, x),
                               ArrayRef<int64_t>{2},
                               /*keep_dims=*/false);
  Value one =
      ReshapeOp::create(b, loc, type.clone({s[0], heads, 1, s[2], s[3]}), x);
  return ReshapeOp::create(b, loc,
                           type.clone({s[0], heads * repeats, s[2], s[3]}),
                           BroadcastOp::create(b, loc, split, one));
}

/// Each reader of `result`, split along the heads, reads it split along
/// the tokens instead: gathered and cut, which dtc-sink-shards makes one
/// all-to-all; with `repeats`, a gradient of repeated key/value heads is
/// summed back into its heads.
LogicalResult headsToTokens(AxisPartitioner &p, Value result,
                            const std::string &why, int64_t repeats = 1) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  for (OpOperand *use : uses) {
    p.gatherOperand(*use, why);
    if (failed(p.localize(*use, 2)))
      return failure();
    if (repeats > 1 && !p.isAnalysis()) {
      p.builder().setInsertionPoint(use->getOwner());
      Value summed = repeatHeads(p.builder(), use->getOwner()->getLoc(),
                                 use->get(), repeats, /*repeat=*/false);
      use->set(summed);
      p.setLayout(summed, AxisLayout::split(2));
    }
  }
  return success();
}

/// `partial`, a result of `op` summed over the ranks' queries, is summed
/// right after it and each reader keeps its rank's tokens (dimension 2),
/// which dtc-sink-shards makes one reduce-scatter. (Analysing, it is left
/// partial.)
LogicalResult sumToTokens(AxisPartitioner &p, Operation *op, Value partial,
                          const std::string &why) {
  p.setLayout(partial, AxisLayout::partial());
  if (p.isAnalysis())
    return success();
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : partial.getUses())
    uses.push_back(&use);
  p.builder().setInsertionPointAfter(op);
  Value sum = p.allReduce(partial, op->getLoc(), why).value;
  for (OpOperand *use : uses) {
    use->set(sum);
    if (failed(p.localize(*use, 2)))
      return failure();
  }
  return success();
}

/// A mask is whole along the keys and, exchanging heads, cut to this
/// rank's heads where it has them; gathering keys, the rule cuts it to the
/// rank's queries.
LogicalResult placeTokenSplitMask(AxisPartitioner &p, Operation *op,
                                  OpOperand *mask, int64_t heads,
                                  bool exchangeHeads, const std::string &why) {
  if (!mask)
    return success();
  if (failed(gatherTokens(p, *mask, why, /*heads=*/false)))
    return failure();
  if (exchangeHeads)
    if (std::optional<int64_t> dim = maskDim(mask->get(), 1, heads))
      return p.localize(*mask, *dim);
  return success();
}

/// Ulysses needs whole heads per rank: the ranks divide the query heads,
/// and the key/value heads, repeated (as DeepSpeed and Megatron do) so
/// that they divide if they do not; how many times each is repeated.
FailureOr<int64_t> kvHeadRepeats(AxisPartitioner &p, Operation *op,
                                 int64_t heads, int64_t kvHeads) {
  int64_t ranks = p.getRanks();
  int64_t repeats = ranks / std::gcd(kvHeads, ranks);
  if (heads % ranks == 0 && (heads / kvHeads) % repeats == 0)
    return repeats;
  return op->emitError(p.getPurpose() + ": ")
         << describeOp(op) << " has " << heads << " query heads and " << kvHeads
         << " key/value heads: the all-to-all over " << ranks << " ranks of '"
         << p.getAxis()
         << "' needs them to divide the query heads (and repeats the "
            "key/value heads until they do): use --context-parallel ring or "
            "all-gather";
}

/// Operand `use` of `attention` (its k or v, split along the tokens) and
/// the same operand of its gradients read its heads repeated.
void repeatKeyValueHeads(AxisPartitioner &p, AttentionOp attention,
                         OpOperand &use, int64_t repeats) {
  Value original = use.get();
  p.builder().setInsertionPoint(attention);
  Value repeated = repeatHeads(p.builder(), attention.getLoc(), original,
                               repeats, /*repeat=*/true);
  p.setLayout(repeated, AxisLayout::split(2));
  unsigned index = use.getOperandNumber();
  original.replaceUsesWithIf(repeated, [&](OpOperand &other) {
    auto grad = dyn_cast<AttentionGradOp>(other.getOwner());
    return &other == &use || (grad && grad.getProbs() == attention.getProbs() &&
                              other.getOperandNumber() == index);
  });
}

/// Forward: the keys and values gathered (the queries keep their split) or
/// q, k and v exchanged for a split of the heads, the result exchanged
/// back.
bool matchesTokenSplitAttention(AxisPartitioner &p, Operation *op) {
  auto attention = dyn_cast<AttentionOp>(op);
  return attention && !p.partitionsBatch() &&
         splitAlongTokens(p, op->getOpOperand(0)) &&
         splitAlongTokens(p, op->getOpOperand(1)) &&
         splitAlongTokens(p, op->getOpOperand(2));
}

LogicalResult partitionTokenSplitAttention(AxisPartitioner &p, Operation *op,
                                           std::string &notApplicable) {
  auto attention = cast<AttentionOp>(op);
  if (p.getTokenSplitAttention() == TokenSplitAttention::Ring) {
    std::string whyNot = whyNoRingAttention(p, attention);
    if (whyNot.empty())
      return partitionRingAttention(p, attention);
    // (Dropout draws by contiguous offsets, which the zigzag order lacks.)
    if (attention.getDropoutRatio())
      return op->emitError(p.getPurpose() + ": ")
             << describeOp(op) << ": " << whyNot
             << ": use --context-parallel all-gather or ulysses";
    if (!p.isAnalysis())
      op->emitWarning(p.getPurpose() + ": ")
          << describeOp(op) << ": " << whyNot
          << "; its keys and values are all-gathered instead";
  }
  bool exchange =
      p.getTokenSplitAttention() == TokenSplitAttention::ExchangeHeads;
  int64_t heads = attention.getQ().getType().getDimSize(1);
  std::string why = p.getPurpose() + ": " + describeOp(op) +
                    (exchange ? " runs on whole sequences of its heads"
                              : " reads the keys and values of every token");
  if (exchange) {
    FailureOr<int64_t> repeats =
        kvHeadRepeats(p, op, heads, attention.getK().getType().getDimSize(1));
    if (failed(repeats))
      return failure();
    if (*repeats > 1 && !p.isAnalysis())
      for (unsigned i : {1u, 2u})
        repeatKeyValueHeads(p, attention, op->getOpOperand(i), *repeats);
  }
  for (unsigned i : {0u, 1u, 2u})
    if ((i > 0 || exchange) &&
        failed(gatherTokens(p, op->getOpOperand(i), why, exchange)))
      return failure();
  OpOperand *mask =
      attention.getMask() ? &attention.getMaskMutable()[0] : nullptr;
  if (failed(placeTokenSplitMask(p, op, mask, heads, exchange, why)))
    return failure();
  if (!exchange) {
    if (failed(p.partitionByRule(op, notApplicable)))
      return failure();
    if (notApplicable.empty())
      placeAttentionDropout(p, attention);
    return success();
  }
  for (Value result : op->getResults())
    if (failed(p.split(result, 1, op)))
      return failure();
  placeAttentionDropout(p, attention);
  return headsToTokens(p, attention.getResult(), why);
}

/// Backward, as the forward ran: gathering keys, dQ keeps the queries'
/// split and dK and dV are partial sums over the whole sequence (each
/// rank's queries contribute), which the engine sums where they are read;
/// exchanging heads, the result's gradient is exchanged for a split of
/// the heads and the three gradients back.
bool matchesTokenSplitAttentionGrad(AxisPartitioner &p, Operation *op) {
  auto grad = dyn_cast<AttentionGradOp>(op);
  return grad && !p.partitionsBatch() &&
         splitAlongTokens(p, grad.getResultGradMutable());
}

LogicalResult partitionTokenSplitAttentionGrad(AxisPartitioner &p,
                                               Operation *op,
                                               std::string &notApplicable) {
  auto grad = cast<AttentionGradOp>(op);
  if (p.getTokenSplitAttention() == TokenSplitAttention::Ring)
    if (auto forward = grad.getProbs().getDefiningOp<AttentionOp>();
        forward && !p.patternState(forward).empty())
      return partitionRingAttentionGrad(p, grad);
  bool exchange =
      p.getTokenSplitAttention() == TokenSplitAttention::ExchangeHeads;
  AxisLayout probs = p.layoutOf(grad.getProbsMutable());
  auto laidOut = [&](unsigned i, bool split) {
    AxisLayout layout = p.layoutOf(op->getOpOperand(i));
    return split ? layout.isSplit() && layout.dim == 2 : layout.isReplicated();
  };
  // The forward's layouts: q split (gathering keys) or whole, k and v
  // whole, the probabilities split along the queries or the heads.
  if (!laidOut(0, !exchange) || !laidOut(1, false) || !laidOut(2, false) ||
      !probs.isSplit() || probs.dim != (exchange ? 1 : 2)) {
    notApplicable = "its operands are not laid out as its forward's";
    return success();
  }
  int64_t heads = grad.getQ().getType().getDimSize(1);
  std::string why =
      p.getPurpose() + ": " + describeOp(op) +
      (exchange ? " runs on whole sequences of its heads"
                : " makes the gradients of the keys and values of every "
                  "token");
  OpOperand *mask = grad.getMask() ? &grad.getMaskMutable()[0] : nullptr;
  if (failed(placeTokenSplitMask(p, op, mask, heads, exchange, why)))
    return failure();
  // The key/value heads the forward repeated: their gradients are made
  // per repeated head, then summed back.
  int64_t repeats = grad.getK().getType().getDimSize(1) /
                    grad.getKGrad().getType().getDimSize(1);
  if (repeats > 1) {
    SmallVector<Value> changed;
    if (failed(reinferResultTypes(op, changed)))
      return op->emitError("cannot retype the gradient of repeated heads");
  }
  if (exchange) {
    for (unsigned i : {0u, 1u, 2u})
      if (failed(p.localize(op->getOpOperand(i), 1)))
        return failure();
    if (failed(gatherTokens(p, grad.getResultGradMutable(), why, true)))
      return failure();
  } else if (mask) {
    int64_t queries = grad.getProbs().getType().getDimSize(2) * p.getRanks();
    if (std::optional<int64_t> dim = maskDim(mask->get(), 2, queries))
      if (failed(p.localize(*mask, *dim)))
        return failure();
  }
  if (!p.isAnalysis() && grad.getDropoutRatio())
    placeDropout(p, op, grad.getOffsetMutable(), grad.getOffset(),
                 grad.getProbs().getType(), probs.dim, grad.getGlobalShape(),
                 [&](ArrayRef<int64_t> whole) { grad.setGlobalShape(whole); });
  if (!exchange) {
    if (failed(p.split(grad.getQGrad(), 2, op)))
      return failure();
    return success(succeeded(sumToTokens(p, op, grad.getKGrad(), why)) &&
                   succeeded(sumToTokens(p, op, grad.getVGrad(), why)));
  }
  for (Value result : op->getResults())
    if (failed(p.split(result, 1, op)) ||
        failed(headsToTokens(p, result, why,
                             result == grad.getQGrad() ? 1 : repeats)))
      return failure();
  return success();
}

} // namespace

ArrayRef<PartitionPattern> mlir::dtc::getPartitionPatterns() {
  static const PartitionPattern patterns[] = {
      {"vocabulary-parallel embedding gradient", matchesRowSplitScatter,
       partitionRowSplitScatter},
      {"caller-placed shard", matchesPlacedShard, partitionPlacedShard},
      {"gather, shard or reduce-scatter over other axes along the split",
       matchesCollectiveAlongSplit, partitionCollectiveAlongSplit},
      {"vocabulary-parallel log-softmax", matchesSplitLogSoftmax,
       partitionSplitLogSoftmax},
      {"vocabulary-parallel lookup", matchesSplitTableGather,
       partitionSplitTableGather},
      {"dropout offsets", matchesDropout, partitionDropout},
      {"grouped-query attention over more ranks than kv heads",
       matchesUnevenKVHeads, partitionUnevenKVHeads},
      {"attention over a split of the tokens", matchesTokenSplitAttention,
       partitionTokenSplitAttention},
      {"attention's gradient over a split of the tokens",
       matchesTokenSplitAttentionGrad, partitionTokenSplitAttentionGrad},
      {"attention dropout offsets", matchesAttentionDropout,
       partitionAttentionDropout},
  };
  return patterns;
}

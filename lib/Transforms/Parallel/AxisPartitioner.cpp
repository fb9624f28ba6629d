//===- AxisPartitioner.cpp - a step's program for one rank of an axis -----===//
//
// A forward walk over the differentiated step that gives every value a
// layout over one mesh axis -- split along one dimension (possibly in
// blocks), replicated, or a partial sum -- from its operands', rewrites
// split values to their per-rank types, and inserts the collectives the
// layouts need, each with its reason. The collectives fall out of the
// layouts, as in GSPMD: split the batch (data parallelism, or gradient
// accumulation, which runs the shards in sequence) and the weight
// gradients' all-reduce appears; split weights (tensor parallelism) and the
// activations' does; split the optimizer state (ZeRO) and the gradients'
// all-reduce becomes a reduce-scatter. The partitioners of several axes
// compose: each sees the others' collectives as ops that keep its layouts.
//
// How an op's layouts propagate is its sharding rule's business
// (ShardingPropagation.h); this file owns the state: which values are
// pinned (the seeds), gathered, already summed. Every change to the IR goes
// through a few methods (split, gatherOperand, sumOverAxis, localize,
// setOperand) that, in the analysis mode, record instead of rewriting.
//
//===----------------------------------------------------------------------===//

#include "AxisPartitioner.h"

#include "dtc/Dialect/DTC/IR/DTCLocations.h"
#include "dtc/Dialect/DTC/IR/TrainingStep.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dtc;

using Kind = AxisLayout::Kind;

AxisPartitioner::AxisPartitioner(
    func::FuncOp func, int64_t ranks, FlatSymbolRefAttr mesh, StringRef axis,
    StringRef purpose, ArrayRef<SplitArgument> seeds,
    llvm::function_ref<std::optional<SplitArgument>(unsigned)> resultSplit,
    int64_t sequenceLength)
    : func(func), ranks(ranks), mesh(mesh), axis(axis.str()),
      purpose(purpose.str()), batch(!resultSplit), seeds(seeds),
      resultSplit(resultSplit), sequenceLength(sequenceLength),
      b(func.getContext()) {
  // The batch's tokens: the first model input's [batch, sequence].
  for (unsigned i = 0, e = func.getNumArguments(); i < e && sequenceLength;
       ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    if (func.getArgAttr(i, kInputAttrName) && type.getRank() >= 2) {
      tokens = type.getDimSize(0) * type.getDimSize(1);
      break;
    }
  }
}

std::string AxisPartitioner::splitName() const {
  return batch ? "the batch" : "the split over '" + axis + "'";
}

RankedTensorType AxisPartitioner::globalType(Value value) const {
  auto type = cast<RankedTensorType>(value.getType());
  AxisLayout layout = layoutOf(value);
  if (analysis || !layout.isSplit())
    return type;
  SmallVector<int64_t> shape(type.getShape());
  shape[layout.dim] *= ranks;
  return type.clone(shape);
}

bool AxisPartitioner::anyOperand(Operation *op, Kind kind) const {
  return llvm::any_of(op->getOpOperands(), [&](OpOperand &use) {
    return layoutOf(use).kind == kind;
  });
}

SeenValue AxisPartitioner::seen(OpOperand &use) const {
  if (auto it = operandSeen.find(&use); it != operandSeen.end())
    return it->second;
  if (auto it = valueSeen.find(use.get()); it != valueSeen.end())
    return it->second;
  return {use.get(), layoutOf(use.get())};
}

void AxisPartitioner::setOperand(OpOperand &use, SeenValue value) {
  if (!analysis) {
    use.set(value.value);
    return;
  }
  operandSeen[&use] = value;
  if (value.sum >= 0) {
    ++sumReads[value.sum].reads;
    sumReads[value.sum].readers.push_back(use.getOwner());
  }
}

/// Analysis: the reads of recorded sums through values whose every use
/// reads the sum (shared partials, existing all-reduces).
void AxisPartitioner::countReads(Operation *op) {
  if (!analysis)
    return;
  for (Value operand : op->getOperands())
    if (auto it = valueSeen.find(operand);
        it != valueSeen.end() && it->second.sum >= 0) {
      ++sumReads[it->second.sum].reads;
      sumReads[it->second.sum].readers.push_back(op);
    }
}

int AxisPartitioner::record(PlannedCollective collective) {
  collectives.push_back(std::move(collective));
  return collectives.size() - 1;
}

LogicalResult AxisPartitioner::run() {
  Block &body = func.getBody().front();
  for (const SplitArgument &seed : seeds) {
    BlockArgument arg = body.getArgument(seed.index);
    if (failed(split(arg, seed.dim, func, seed.blocks)))
      return failure();
    if (seed.pinned)
      pinned.insert(arg);
  }
  for (BlockArgument arg : body.getArguments()) {
    if (!batch)
      break;
    auto input =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kInputAttrName);
    if (!input)
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getRank() == 0 || type.getDimSize(0) % ranks != 0)
      return func.emitError("input '")
             << input.getValue() << "' of type " << type
             << ": its batch (dimension 0) does not divide over " << ranks
             << " " << purpose << " shards";
    if (failed(split(arg, 0, func)))
      return failure();
  }
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  // Analysis: sums over this axis that exist already may become
  // reduce-scatters too (ZeRO's cut of data parallelism's gradients).
  if (analysis)
    for (Operation *op : ops)
      if (auto sum = dyn_cast<AllReduceOp>(op);
          sum && sum.getAxes() == b.getStrArrayAttr({axis})) {
        PlannedCollective existing{
            "all_reduce", {axis}, sum.getBusBytes(ranks),
            sum.getReason() ? sum.getReason()->str() : std::string(),
            sum.getLoc()};
        existing.reduction = sum.getKind();
        existing.existing = sum;
        valueSeen[sum.getResult()] = {sum.getResult(), AxisLayout(),
                                      record(std::move(existing)), true};
      }
  for (Operation *op : ops) {
    if (failed(partitionOrGather(op)))
      return failure();
    if (!batch)
      reduceSharedPartials(op);
  }

  if (failed(partitionResults()))
    return failure();
  if (analysis) {
    fusePlannedSums();
    return success();
  }
  for (Operation *op : erased)
    op->erase();
  if (!batch) {
    fuseReduceScatters();
    fuseNestedSums();
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  func.setFunctionType(FunctionType::get(
      func.getContext(), body.getArgumentTypes(), ret.getOperandTypes()));
  // The rewritten ops; the function's own attributes are checked after the
  // pass that called this, which may not be done with them (ZeRO cuts a
  // padded parameter's update, which aliases it, to its rows afterwards).
  for (Operation &op : body)
    if (failed(verify(&op)))
      return failure();
  return success();
}

/// The function's results end up as the caller wants them: split ones kept
/// whole are gathered, partial ones summed, whole gradients of split
/// parameters cut to this rank's part.
LogicalResult AxisPartitioner::partitionResults() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  countReads(ret);
  // The argument each result is the next value of, for the reasons.
  llvm::DenseMap<unsigned, unsigned> updated;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (std::optional<unsigned> result = getAliasingOutput(func, i))
      updated[*result] = i;
  for (OpOperand &operand : ret->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    AxisLayout layout = layoutOf(operand);
    auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName);
    auto update = updated.find(i);
    std::string what = grad ? "gradient of " + grad.str()
                       : update != updated.end()
                           ? "new " + dtc::getArgumentName(func, update->second)
                           : "result " + std::to_string(i);
    std::optional<SplitArgument> wanted = wantedResultSplit(i);
    if (layout.isSplit() && (!wanted || wanted->dim != layout.dim ||
                             wanted->blocks != layout.blocks)) {
      // Over the batch a resharding (the gradient of a weight the batch
      // indexes); over tp the layout the result was chosen to have.
      std::string why = what + " is computed split over '" + axis +
                        "' but kept whole";
      if (!batch)
        gatherOperand(operand, purpose + ": " + why);
      else if (failed(reshard(operand, why)))
        return failure();
      layout = AxisLayout();
    }
    if (layout.isPartial()) {
      std::string why = purpose + ": " + what +
                        (batch ? " (summed over the batch shards)"
                               : " (partial sums over " + axis + ")");
      Value partial = seen(operand).value;
      auto it = materialized.find(partial);
      if (it == materialized.end()) {
        b.setInsertionPoint(ret);
        it = materialized.try_emplace(partial, allReduce(partial, ret.getLoc(), why))
                 .first;
      }
      setOperand(operand, it->second);
    }
    // A whole gradient of a split parameter: this rank's part of it.
    if (wanted && layoutOf(operand).isReplicated() &&
        failed(localize(operand, wanted->dim, wanted->blocks)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// One op
//===----------------------------------------------------------------------===//

SmallVector<RankedTensorType>
AxisPartitioner::globalOperandTypes(Operation *op) const {
  SmallVector<RankedTensorType> types;
  for (OpOperand &use : op->getOpOperands())
    types.push_back(globalType(seen(use).value));
  return types;
}

SmallVector<AxisLayout> AxisPartitioner::operandLayouts(Operation *op) const {
  SmallVector<AxisLayout> result;
  for (OpOperand &use : op->getOpOperands())
    result.push_back(layoutOf(use));
  return result;
}

PlanOptions AxisPartitioner::planOptions(Operation *op) const {
  PlanOptions options;
  options.ranks = ranks;
  options.mayGather = !batch;
  options.isZero = [op](unsigned i) { return isFloatZeros(op->getOperand(i)); };
  return options;
}

bool AxisPartitioner::passesPartials(Operation *op) const {
  if (anyOperand(op, Kind::Split))
    return false;
  // A partial sum a broadcast enlarges (the VJP of a mean over the batch,
  // in a batch norm's backward) is summed before it, where it is small.
  if (auto broadcast = dyn_cast<BroadcastOp>(op);
      broadcast && broadcast.getType().getNumElements() >
                       broadcast.getInput().getType().getNumElements())
    return false;
  // Microbatches' gradients add up before a cast narrows them (bf16
  // gradients accumulate in f32); ranks' sums may travel narrow.
  if (auto cast = dyn_cast<CastOp>(op); cast && !rankIndexed) {
    auto from = dyn_cast<FloatType>(cast.getInput().getType().getElementType());
    auto to = dyn_cast<FloatType>(cast.getType().getElementType());
    if (from && to && to.getWidth() < from.getWidth())
      return false;
  }
  auto shardable = dyn_cast<ShardingRuleOpInterface>(op);
  if (!shardable)
    return false;
  SmallVector<RankedTensorType> resultTypes;
  for (Type type : op->getResultTypes())
    resultTypes.push_back(cast<RankedTensorType>(type));
  return passesPartialSums(shardable, globalOperandTypes(op), resultTypes,
                           operandLayouts(op), planOptions(op));
}

LogicalResult AxisPartitioner::partition(Operation *op,
                                         std::string &notApplicable) {
  if (inserted.contains(op))
    return success();
  countReads(op);
  if (anyOperand(op, Kind::Partial)) {
    if (passesPartials(op)) {
      for (Value result : op->getResults())
        layouts[result] = AxisLayout::partial();
      return success();
    }
    materialize(op);
  }
  for (const PartitionPattern &pattern : getPartitionPatterns())
    if (pattern.matches(*this, op))
      return pattern.apply(*this, op, notApplicable);
  if (!anyOperand(op, Kind::Split))
    return success();
  return partitionByRule(op, notApplicable);
}

LogicalResult AxisPartitioner::partitionByRule(Operation *op,
                                               std::string &notApplicable) {
  auto shardable = dyn_cast<ShardingRuleOpInterface>(op);
  if (!shardable) {
    notApplicable = "it has no sharding rule";
    return success();
  }
  SmallVector<RankedTensorType> resultTypes;
  for (Type type : op->getResultTypes())
    resultTypes.push_back(cast<RankedTensorType>(type));
  FailureOr<OpPlan> plan =
      planByRule(shardable, globalOperandTypes(op), resultTypes,
                 operandLayouts(op), planOptions(op), notApplicable);
  if (failed(plan))
    return success();
  return applyPlan(op, *plan);
}

LogicalResult AxisPartitioner::applyPlan(Operation *op, const OpPlan &plan) {
  for (auto [use, action] : llvm::zip(op->getOpOperands(), plan.operands)) {
    if (action.gather) {
      bool lhs = use.getOperandNumber() == 0;
      std::string which = op->getNumOperands() == 2
                              ? (lhs ? "lhs" : "rhs")
                              : "operand #" +
                                    std::to_string(use.getOperandNumber());
      std::string why =
          "needs its " + which + " whole (split unlike " +
          (op->getNumOperands() == 2 ? std::string(lhs ? "the rhs" : "the lhs")
                                     : std::string("the others")) +
          ")";
      // Sequence parallelism's gather of the sequence before a projection
      // is its design, not a resharding; so is expert parallelism's
      // exchange of tokens for experts.
      if (isSequencePart(seen(use).value) || exchangesAreDesign)
        gatherOperand(use, purpose + ": " + describeOp(op) + " " + why);
      else if (failed(reshard(use, "it " + why)))
        return failure();
    }
    if (action.localizes() &&
        failed(localize(use, action.localizeDim, action.blocks)))
      return failure();
  }
  for (auto [result, layout] : llvm::zip(op->getResults(), plan.results)) {
    if (layout.isSplit() &&
        failed(split(result, layout.dim, op, layout.blocks)))
      return failure();
    if (!layout.isSplit())
      layouts[result] = layout;
  }
  if (analysis)
    return success();
  if (auto shardable = dyn_cast<ShardingRuleOpInterface>(op))
    shardable.adaptToLocalTypes();
  // The mean of N equal shards is the mean of their means.
  if (plan.partialReduction == FactorReduction::Mean) {
    b.setInsertionPointAfter(op);
    Value result = op->getResult(0);
    auto type = cast<RankedTensorType>(result.getType());
    Value inv = ConstantOp::create(
        b, op->getLoc(),
        DenseElementsAttr::get(
            RankedTensorType::get({}, type.getElementType()),
            b.getFloatAttr(type.getElementType(), 1.0 / ranks)));
    Value scaled = MulOp::create(b, op->getLoc(), result, inv);
    result.replaceAllUsesExcept(scaled, scaled.getDefiningOp());
    layouts[scaled] = AxisLayout::partial();
    inserted.insert(scaled.getDefiningOp());
  }
  return success();
}

/// An op the engine cannot partition as its operands are laid out (a
/// reshape that would mix heads, a softmax over a split dimension, over the
/// batch): it runs replicated on gathered operands, with a warning (an
/// error under --strict-sharding). Gathering a seed is an error: the weight
/// layouts chosen are kept.
LogicalResult AxisPartitioner::partitionOrGather(Operation *op) {
  std::string why;
  if (failed(partition(op, why)))
    return failure();
  if (why.empty())
    return success();
  std::string name = describeOp(op);
  for (OpOperand &use : op->getOpOperands()) {
    if (!layoutOf(use).isSplit())
      continue;
    if (pinned.contains(seen(use).value))
      return op->emitError(purpose + ": ")
             << name << " needs operand #" << use.getOperandNumber()
             << ", a sharded parameter, whole (" << why
             << "); the parameter layouts are pinned";
    if (failed(reshard(use, why)))
      return failure();
  }
  if (analysis)
    fallbacks.push_back({op, why});
  else
    op->emitWarning(purpose + ": ")
        << name << " runs replicated on gathered operands: " << why;
  return success();
}

/// The engine's way out of a conflict: `use` reads its split operand whole,
/// all-gathered, the collective marked as a resharding with `why`; under
/// --strict-sharding an error naming the op, the operand and the bytes.
LogicalResult AxisPartitioner::reshard(OpOperand &use, const std::string &why) {
  Operation *op = use.getOwner();
  Value value = seen(use).value;
  if (strict) {
    auto type = cast<RankedTensorType>(value.getType());
    double whole = tensorByteSize(globalType(value));
    return op->emitError(purpose + ": --strict-sharding: ")
           << describeOp(op) << " would need operand #"
           << use.getOperandNumber() << " (" << type
           << " per rank, split along dimension " << layoutOf(value).dim
           << " over '" << axis << "') all-gathered, "
           << static_cast<int64_t>(whole * (ranks - 1) / ranks)
           << " bus bytes per step: " << why;
  }
  gatherOperand(use, purpose + ": " + describeOp(op) + ": " + why,
                /*resharding=*/true);
  return success();
}

//===----------------------------------------------------------------------===//
// Layouts and the collectives between them
//===----------------------------------------------------------------------===//

LogicalResult AxisPartitioner::split(Value value, int64_t dim, Operation *where,
                                     int64_t blocks) {
  auto type = cast<RankedTensorType>(value.getType());
  if (dim < 0 || dim >= type.getRank() ||
      type.getDimSize(dim) % (ranks * blocks) != 0)
    return where->emitError("cannot split dimension ")
           << dim << " of " << type << " over " << ranks << " ranks"
           << (blocks > 1 ? " in " + std::to_string(blocks) + " blocks"
                          : std::string());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= ranks;
  if (!analysis)
    value.setType(type.clone(shape));
  layouts[value] = AxisLayout::split(dim, blocks);
  return success();
}

void AxisPartitioner::gatherOperand(OpOperand &use, const std::string &why,
                                    bool resharding) {
  Value value = seen(use).value;
  auto it = gathered.find(value);
  if (it != gathered.end())
    return setOperand(use, it->second);
  AxisLayout layout = layoutOf(value);
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (analysis) {
    // The all-gather's bus bytes: (n-1)/n of the whole.
    double whole = tensorByteSize(type);
    record({"all_gather", {axis}, whole * (ranks - 1) / ranks, why,
            use.getOwner()->getLoc()});
    SeenValue result{value, AxisLayout(), -1, /*collective=*/true};
    gathered[value] = result;
    return setOperand(use, result);
  }
  shape[layout.dim] *= ranks;
  Location loc = use.getOwner()->getLoc();
  b.setInsertionPointAfterValue(value);
  // Blocks: the dimension viewed as [.., blocks, chunk, ..], gathered along
  // the chunks (a fused projection's q, k and v; each sequence of a Gemm's
  // token rows, whose batch so stays a dimension of its own for gradient
  // accumulation to split).
  Value operand = value;
  int64_t dim = layout.dim;
  RankedTensorType gatheredType = type.clone(shape);
  if (layout.blocks > 1) {
    SmallVector<int64_t> view(type.getShape());
    view[dim] /= layout.blocks;
    view.insert(view.begin() + dim, layout.blocks);
    operand = ReshapeOp::create(b, loc, type.clone(view), value);
    ++dim;
    view[dim] *= ranks;
    gatheredType = type.clone(view);
  }
  Value result = AllGatherOp::create(
      b, loc, gatheredType, operand, mesh, b.getStrArrayAttr({axis}),
      b.getI64IntegerAttr(dim), b.getStringAttr(why));
  if (resharding)
    result.getDefiningOp()->setAttr(kReshardingAttrName, b.getUnitAttr());
  if (layout.blocks > 1)
    result = ReshapeOp::create(b, loc, type.clone(shape), result);
  else if (zigzag)
    result = permuteTokens(result, layout.dim, /*toNatural=*/true, loc);
  layouts[result] = AxisLayout();
  gathered[value] = {result, AxisLayout(), -1, true};
  use.set(result);
}

void AxisPartitioner::gatherForLaterReaders(OpOperand &use,
                                            const std::string &why) {
  Value split = seen(use).value;
  Operation *owner = use.getOwner();
  gatherOperand(use, why);
  if (analysis) {
    valueSeen[split] = gathered.lookup(split);
    return;
  }
  split.replaceUsesWithIf(use.get(), [&](OpOperand &other) {
    return owner->isBeforeInBlock(other.getOwner());
  });
}

SeenValue AxisPartitioner::allReduce(Value value, Location loc,
                                     const std::string &why,
                                     CollectiveReduction kind) {
  if (analysis) {
    double bytes = tensorByteSize(value.getType());
    PlannedCollective sum{"all_reduce", {axis}, 2 * bytes * (ranks - 1) / ranks,
                          why, loc};
    sum.reduction = kind;
    return {value, AxisLayout(), record(std::move(sum)), true};
  }
  auto op = AllReduceOp::create(
      b, loc, value.getType(), value, mesh, b.getStrArrayAttr({axis}),
      CollectiveReductionAttr::get(b.getContext(), kind), b.getStringAttr(why));
  layouts[op.getResult()] = AxisLayout();
  return {op.getResult(), AxisLayout(), -1, true};
}

void AxisPartitioner::recordAllReduce(RankedTensorType type, Location loc,
                                      const std::string &why,
                                      CollectiveReduction kind) {
  PlannedCollective sum{"all_reduce", {axis},
                        2.0 * tensorByteSize(type) * (ranks - 1) / ranks, why,
                        loc};
  sum.reduction = kind;
  record(std::move(sum));
}

void AxisPartitioner::sumResult(Value result, const std::string &why) {
  SeenValue whole =
      sumOverAxis(result, result.getLoc(), why, /*mayScatter=*/true);
  valueSeen[result] = whole;
  layouts[result] = whole.layout;
}

void AxisPartitioner::noteCut(OpOperand &use, int64_t dim, int64_t blocks) {
  if (int sum = seen(use).sum; sum >= 0)
    sumReads[sum].cuts.push_back({dim, blocks});
}

/// An activation split along the sequence by sequence parallelism:
/// [batch, sequence, features] along dimension 1, or with the batch and
/// the sequence merged into tokens (a Gemm's [batch x sequence, features])
/// in one block per sequence.
bool AxisPartitioner::isSequencePart(Value value) const {
  AxisLayout layout = layoutOf(value);
  return sequenceLength > 0 && layout.isSplit() &&
         globalType(value).getDimSize(layout.dim) / layout.blocks ==
             sequenceLength;
}

/// Whether `value` is the batch's tokens as rows, [batch x sequence,
/// features]: a view of [batch, sequence, ...] values, or what projections
/// (of it as their lhs) and elementwise ops make of one. (Not a weight's
/// gradient that happens to have as many rows: the backward's products
/// contract the tokens.)
bool AxisPartitioner::isTokenRows(Value value, int depth) const {
  auto type = cast<RankedTensorType>(value.getType());
  Operation *def = value.getDefiningOp();
  if (type.getRank() != 2 || type.getDimSize(0) != tokens || !def || depth > 16)
    return false;
  if (auto reshape = dyn_cast<ReshapeOp>(def)) {
    ArrayRef<int64_t> in = reshape.getInput().getType().getShape();
    return in.size() >= 3 && in[1] == sequenceLength && in[0] * in[1] == tokens;
  }
  if (auto matmul = dyn_cast<MatmulOp>(def))
    return !matmul.getTransposeLhs() && isTokenRows(matmul.getLhs(), depth + 1);
  if (isElementwise(def) || isa<CastOp>(def))
    return llvm::any_of(def->getOperands(), [&](Value operand) {
      return isTokenRows(operand, depth + 1);
    });
  return false;
}

/// Sequence parallelism's form of an activation: reduce-scattered along
/// the sequence rather than all-reduced ([batch, sequence, features], or
/// the batch's tokens as rows).
bool AxisPartitioner::scattersAlongSequence(Value partial) const {
  auto type = cast<RankedTensorType>(partial.getType());
  if (sequenceLength <= 0 || sequenceLength % ranks != 0)
    return false;
  return (type.getRank() == 3 && type.getDimSize(1) == sequenceLength) ||
         isTokenRows(partial);
}

SeenValue AxisPartitioner::sumOverAxis(Value partial, Location loc,
                                       const std::string &why,
                                       bool mayScatter) {
  b.setInsertionPointAfterValue(partial);
  if (!mayScatter || !scattersAlongSequence(partial))
    return allReduce(partial, loc, why);
  auto type = cast<RankedTensorType>(partial.getType());
  std::string reason = why + " (sequence-parallel: each rank keeps its "
                             "part of the sequence)";
  // Rows of tokens: each sequence's part, one block per sequence.
  bool rows = type.getRank() == 2;
  AxisLayout layout = rows ? AxisLayout::split(0, tokens / sequenceLength)
                           : AxisLayout::split(1);
  if (analysis) {
    double bytes = tensorByteSize(type);
    record({"reduce_scatter", {axis}, bytes * (ranks - 1) / ranks, reason, loc});
    return {partial, layout, -1, true};
  }
  // (Rows are scattered as [batch, sequence, features].)
  RankedTensorType whole =
      rows ? type.clone(
                 {tokens / sequenceLength, sequenceLength, type.getDimSize(1)})
           : type;
  Value sum = rows ? ReshapeOp::create(b, loc, whole, partial) : partial;
  SmallVector<int64_t> shape(whole.getShape());
  shape[1] /= ranks;
  Value part = ReduceScatterOp::create(
      b, loc, whole.clone(shape), sum, mesh, b.getStrArrayAttr({axis}),
      b.getI64IntegerAttr(1), b.getStringAttr(reason));
  if (rows)
    part = ReshapeOp::create(
        b, loc, type.clone({tokens / ranks, type.getDimSize(1)}), part);
  layouts[part] = layout;
  return {part, layout, -1, true};
}

/// Sums the partial operands of `op`, which needs them whole (or, with
/// sequence parallelism, split along the sequence): once per partial
/// value, right after it, for all its uses.
void AxisPartitioner::materialize(Operation *op) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!layoutOf(operand).isPartial())
      continue;
    Value partial = seen(operand).value;
    auto it = materialized.find(partial);
    if (it == materialized.end())
      it = materialized
               .try_emplace(
                   partial,
                   sumOverAxis(partial, op->getLoc(),
                               purpose + ": " + describeOp(op) +
                                   " needs the whole value of a partial sum "
                                   "over " +
                                   (batch ? std::string("the batch")
                                          : "'" + axis + "'"),
                               /*mayScatter=*/true))
               .first;
    setOperand(operand, it->second);
  }
}

/// Megatron's placement of the all-reduce: a partial sum that several ops
/// read (the input gradient of a column-parallel projection, read by the
/// norm's backward) is reduced once, where it is made, rather than carried
/// into each reader's results.
void AxisPartitioner::reduceSharedPartials(Operation *op) {
  for (Value result : op->getResults()) {
    if (!layoutOf(result).isPartial() || result.hasOneUse() ||
        result.use_empty())
      continue;
    // Slices read parts of it (the window slices of a convolution's
    // columns, in its input's gradient): the parts stay partial sums, to be
    // summed where they meet again, after col2im.
    if (llvm::all_of(result.getUsers(),
                     [](Operation *user) { return isa<SliceOp>(user); }))
      continue;
    // (Its readers before the sum: the sum reads it too, through a view
    // of token rows.)
    SmallVector<OpOperand *> readers;
    for (OpOperand &use : result.getUses())
      readers.push_back(&use);
    SeenValue whole =
        sumOverAxis(result, op->getLoc(),
                    purpose + ": " + describeOp(op) +
                        " makes a partial sum that several ops read",
                    /*mayScatter=*/true);
    materialized[result] = whole;
    if (analysis)
      valueSeen[result] = whole; // every reader reads the sum
    else
      for (OpOperand *reader : readers)
        reader->set(whole.value);
  }
}

/// Whether replicated `value` holds the same values at every index of
/// dimension `dim` (a broadcast along it, an iota along another dimension,
/// a splat, or elementwise ops and slices of such values).
bool AxisPartitioner::uniformAlong(Value value, int64_t dim) const {
  auto type = cast<RankedTensorType>(value.getType());
  if (dim < 0 || type.getDimSize(dim) == 1)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (auto iota = dyn_cast<IotaOp>(def))
    return static_cast<int64_t>(iota.getDim()) != dim;
  if (auto constant = dyn_cast<ConstantOp>(def))
    return isa<SplatElementsAttr>(constant.getValue());
  if (isa<BroadcastOp, SliceOp>(def) || isElementwise(def))
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
      return uniformAlong(operand, dim - (type.getRank() - rank));
    });
  return false;
}

/// Gives `use` this rank's part of a replicated value, split along `dim`
/// in `blocks` blocks: a slice of a value uniform along `dim` (any part
/// will do), otherwise the rank's own part (dtc.shard; gradient
/// accumulation turns a shard over its microbatches into each copy's
/// slice). Over the batch, such a value is one computed from constants
/// and parameters only (OPT's positions from a baked all-ones mask): each
/// shard cuts its rows locally, with no communication.
LogicalResult AxisPartitioner::localize(OpOperand &use, int64_t dim,
                                        int64_t blocks) {
  SeenValue whole = seen(use);
  Value value = whole.value;
  auto type = cast<RankedTensorType>(value.getType());
  Operation *owner = use.getOwner();
  SmallVector<int64_t> sizes(type.getShape());
  sizes[dim] /= ranks;
  if (sizes[dim] * ranks != type.getDimSize(dim) || sizes[dim] % blocks != 0)
    return owner->emitError("cannot split operand #")
           << use.getOperandNumber() << " of type " << type
           << " along dimension " << dim << " over " << ranks << " ranks";
  bool uniform = !whole.collective && uniformAlong(value, dim);
  if (analysis) {
    // A sum whose readers all keep a part of it becomes a reduce-scatter.
    if (whole.sum >= 0)
      sumReads[whole.sum].cuts.push_back({dim, blocks});
    operandSeen[&use] = {value, AxisLayout::split(dim, blocks)};
    return success();
  }
  b.setInsertionPoint(owner);
  Value part;
  if (uniform) {
    SmallVector<int64_t> starts(type.getRank(), 0), strides(type.getRank(), 1);
    part = SliceOp::create(b, owner->getLoc(), value, starts, sizes, strides);
  } else {
    // The shard says why (and so is not taken for a caller-placed one by a
    // later partitioner of the same axis: ZeRO's over dp, or over ep).
    StringAttr why =
        b.getStringAttr(purpose + ": " + describeOp(owner) +
                        (batch ? " reads this shard's rows of operand #" +
                                     std::to_string(use.getOperandNumber()) +
                                     ", computed without the inputs"
                               : " reads this rank's part of operand #" +
                                     std::to_string(use.getOperandNumber())));
    Value whole = value;
    if (zigzag && blocks == 1)
      whole = permuteTokens(value, dim, /*toNatural=*/false, owner->getLoc());
    part = ShardOp::create(b, owner->getLoc(), type.clone(sizes), whole, mesh,
                           b.getStrArrayAttr({axis}), b.getI64IntegerAttr(dim),
                           b.getI64IntegerAttr(blocks), why);
  }
  use.set(part);
  layouts[part] = AxisLayout::split(dim, blocks);
  return success();
}

Value AxisPartitioner::chunkStart(int64_t size, Type type, Location loc) {
  return dtc::chunkStart(b, loc, size, ranks, type, mesh,
                         b.getStrArrayAttr({axis}));
}

SmallVector<int64_t> mlir::dtc::zigzagOrder(int64_t size, int64_t ranks,
                                            bool inverse) {
  int64_t chunk = size / (2 * ranks);
  SmallVector<int64_t> order;
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t c : {r, 2 * ranks - 1 - r})
      for (int64_t i = 0; i < chunk; ++i)
        order.push_back(c * chunk + i);
  if (!inverse)
    return order;
  SmallVector<int64_t> positions(size);
  for (auto [position, token] : llvm::enumerate(order))
    positions[token] = position;
  return positions;
}

Value AxisPartitioner::permuteTokens(Value value, int64_t dim, bool toNatural,
                                     Location loc) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t size = type.getDimSize(dim);
  auto indexType = RankedTensorType::get({size}, b.getI64Type());
  Value order = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          indexType, ArrayRef<int64_t>(zigzagOrder(size, ranks, toNatural))));
  return GatherOp::create(b, loc, type, value, order, b.getI64IntegerAttr(dim));
}

Value AxisPartitioner::scalar(Location loc, Type type, int64_t value) {
  auto shaped = RankedTensorType::get({}, type);
  Attribute attr = isa<IntegerType>(type)
                       ? Attribute(b.getIntegerAttr(type, value))
                       : Attribute(b.getFloatAttr(type, value));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(shaped, attr));
}

//===----------------------------------------------------------------------===//
// Collective clean-up
//===----------------------------------------------------------------------===//

/// An all-reduce over the axis whose every reader keeps only its part
/// along one dimension is a reduce-scatter: half the bus bytes.
void AxisPartitioner::fuseReduceScatters() {
  SmallVector<AllReduceOp> sums;
  func.walk([&](AllReduceOp op) { sums.push_back(op); });
  IRRewriter rewriter(func.getContext());
  for (AllReduceOp sum : sums)
    if (sum.getAxes() == b.getStrArrayAttr({axis}))
      (void)scatterInsteadOfSum(sum, rewriter);
}

/// A sum over this axis that only feeds a sum over others (a replicated
/// weight's gradient, summed over tp and then over dp) is one sum over
/// both: one call, and fewer bus bytes.
void AxisPartitioner::fuseNestedSums() {
  SmallVector<AllReduceOp> sums;
  func.walk([&](AllReduceOp op) { sums.push_back(op); });
  for (AllReduceOp inner : sums) {
    if (inner.getKind() != CollectiveReduction::Sum ||
        inner.getAxes() != b.getStrArrayAttr({axis}) || !inner->hasOneUse())
      continue;
    auto outer = dyn_cast<AllReduceOp>(*inner->user_begin());
    if (!outer || outer.getKind() != CollectiveReduction::Sum ||
        outer.getMeshAttr() != inner.getMeshAttr() ||
        llvm::is_contained(outer.getAxes(), b.getStringAttr(axis)))
      continue;
    SmallVector<Attribute> axes(outer.getAxes().begin(), outer.getAxes().end());
    axes.push_back(b.getStringAttr(axis));
    outer.setAxesAttr(b.getArrayAttr(axes));
    outer.getInputMutable().assign(inner.getInput());
    inner.erase();
  }
}

/// Analysis: the two clean-ups above, on the recorded collectives.
void AxisPartitioner::fusePlannedSums() {
  StringAttr axisName = b.getStringAttr(axis);
  SmallVector<PlannedCollective> widenedSums;
  for (auto [index, planned] : llvm::enumerate(collectives)) {
    if (planned.kind != "all_reduce" ||
        planned.reduction != CollectiveReduction::Sum)
      continue;
    const SumReads &reads = sumReads[index];
    bool cut = reads.reads > 0 &&
               static_cast<int64_t>(reads.cuts.size()) == reads.reads &&
               llvm::all_of(reads.cuts, [&](auto dimBlocks) {
                 return dimBlocks == std::make_pair(reads.cuts[0].first,
                                                    int64_t(1));
               });
    if (cut) {
      planned.kind = "reduce_scatter";
      planned.busBytes /= 2;
      planned.reason =
          (planned.reason.empty() ? "" : planned.reason + "; ") +
          "each rank keeps its part";
      continue;
    }
    // A sum read once, by a sum over other axes: one sum over all.
    if (planned.existing || reads.reads != 1 || reads.readers.size() != 1)
      continue;
    auto outer = dyn_cast<AllReduceOp>(reads.readers[0]);
    if (!outer || outer.getKind() != CollectiveReduction::Sum ||
        outer.getMeshAttr() != mesh ||
        llvm::is_contained(outer.getAxes(), axisName))
      continue;
    planned.folded = true;
    PlannedCollective widened{"all_reduce", {}, 0,
                              outer.getReason() ? outer.getReason()->str()
                                                : std::string(),
                              outer.getLoc()};
    for (StringRef outerAxis : outer.getAxes().getAsValueRange<StringAttr>())
      widened.axes.push_back(outerAxis.str());
    widened.axes.push_back(axis);
    int64_t n =
        ranks * cast<CollectiveOpInterface>(outer.getOperation()).getGroupSize();
    widened.busBytes = 2.0 * (n - 1) / n * tensorByteSize(outer.getType());
    widened.existing = outer;
    widenedSums.push_back(std::move(widened));
  }
  llvm::append_range(collectives, widenedSums);
  // Existing sums the partition leaves alone are no change.
  llvm::erase_if(collectives, [](const PlannedCollective &planned) {
    return planned.existing && planned.kind == "all_reduce" &&
           planned.axes.size() == 1;
  });
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

LogicalResult mlir::dtc::partitionBatch(func::FuncOp func, int64_t shards,
                                        FlatSymbolRefAttr mesh, StringRef axis,
                                        StringRef purpose, bool rankIndexed,
                                        bool strict) {
  AxisPartitioner partitioner(func, shards, mesh, axis, purpose);
  partitioner.setRankIndexed(rankIndexed);
  partitioner.setStrict(strict);
  return partitioner.run();
}

LogicalResult mlir::dtc::partitionOverAxis(
    func::FuncOp func, int64_t ranks, FlatSymbolRefAttr mesh, StringRef axis,
    StringRef purpose, ArrayRef<SplitArgument> seeds,
    llvm::function_ref<std::optional<SplitArgument>(unsigned)> resultSplit,
    int64_t sequenceLength, bool strict) {
  AxisPartitioner partitioner(func, ranks, mesh, axis, purpose, seeds,
                              resultSplit, sequenceLength);
  partitioner.setStrict(strict);
  return partitioner.run();
}

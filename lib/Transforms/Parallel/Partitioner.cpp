//===- Partitioner.cpp - a step's program for one rank of a mesh axis -----===//
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
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"

#include <numeric>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// "'dtc.matmul' (/h.0/attn/MatMul)": the op and, for imported ones, the
/// ONNX node it comes from (the innermost name of its location).
std::string label(Operation *op) {
  std::string text = "'" + op->getName().getStringRef().str() + "'";
  StringRef node;
  Location loc = op->getLoc();
  while (auto name = dyn_cast<NameLoc>(loc)) {
    node = name.getName().getValue();
    loc = name.getChildLoc();
  }
  if (!node.empty())
    text += " (" + node.str() + ")";
  return text;
}

enum class Kind { Replicated, Split, Partial };
struct Layout {
  Kind kind = Kind::Replicated;
  int64_t dim = -1;
  /// A split dimension viewed as `blocks` equal blocks, each split (the
  /// heads of a fused QKV projection).
  int64_t blocks = 1;
  static Layout split(int64_t dim, int64_t blocks = 1) {
    return {Kind::Split, dim, blocks};
  }
  static Layout partial() { return {Kind::Partial, -1}; }
};

class Partitioner {
public:
  void setRankIndexed(bool indexed) { rankIndexed = indexed; }

  /// Splits the batch (without `resultSplit`) or the seeds.
  Partitioner(func::FuncOp func, int64_t ranks, FlatSymbolRefAttr mesh,
              StringRef axis, StringRef purpose,
              ArrayRef<SplitArgument> seeds = {},
              llvm::function_ref<std::optional<SplitArgument>(unsigned)>
                  resultSplit = nullptr,
              int64_t sequenceLength = 0)
      : func(func), ranks(ranks), mesh(mesh), axis(axis.str()),
        purpose(purpose.str()), batch(!resultSplit), seeds(seeds),
        resultSplit(resultSplit), sequenceLength(sequenceLength),
        b(func.getContext()) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    for (const SplitArgument &seed : seeds) {
      BlockArgument arg = body.getArgument(seed.index);
      if (failed(split(arg, seed.dim, func, seed.blocks)))
        return failure();
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
    for (Operation *op : ops) {
      if (failed(batch ? partition(op) : partitionOrGather(op)))
        return failure();
      if (!batch)
        reduceSharedPartials(op);
    }
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      Layout layout = layouts.lookup(operand.get());
      auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName);
      auto update = func.getResultAttrOfType<StringAttr>(i, kUpdateAttrName);
      std::string what = grad     ? "gradient of " + grad.str()
                         : update ? "new " + update.str()
                                  : "result " + std::to_string(i);
      if (layout.kind == Kind::Split && batch)
        return ret.emitError("result ")
               << i
               << " is split over the batch; dtc-data-parallel needs "
                  "replicated results";
      std::optional<SplitArgument> wanted =
          batch ? std::nullopt : resultSplit(i);
      if (layout.kind == Kind::Split && (!wanted || wanted->dim != layout.dim ||
                                         wanted->blocks != layout.blocks)) {
        operand.set(gather(operand.get(), ret.getLoc(),
                           purpose + ": " + what + " is computed split over '" +
                               axis + "' but kept whole"));
        b.setInsertionPoint(ret);
        layout = Layout();
      }
      if (layout.kind == Kind::Partial) {
        std::string why = purpose + ": " + what +
                          (batch ? " (summed over the batch shards)"
                                 : " (partial sums over " + axis + ")");
        Value &whole = materialized[operand.get()];
        if (!whole)
          whole = allReduce(operand.get(), ret.getLoc(), why);
        operand.set(whole);
      }
      // A whole gradient of a split parameter: this rank's part of it.
      if (wanted && layouts.lookup(operand.get()).kind == Kind::Replicated &&
          failed(localize(operand, wanted->dim,
                          Layout::split(wanted->dim, wanted->blocks))))
        return failure();
    }
    if (!batch) {
      fuseReduceScatters();
      fuseNestedSums();
    }
    func.setFunctionType(FunctionType::get(
        func.getContext(), body.getArgumentTypes(), ret.getOperandTypes()));
    return verify(func);
  }

private:
  /// An all-reduce over the axis whose every reader keeps only its part
  /// along one dimension is a reduce-scatter: half the bus bytes.
  void fuseReduceScatters() {
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
  void fuseNestedSums() {
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
      SmallVector<Attribute> axes(outer.getAxes().begin(),
                                  outer.getAxes().end());
      axes.push_back(b.getStringAttr(axis));
      outer.setAxesAttr(b.getArrayAttr(axes));
      outer.getInputMutable().assign(inner.getInput());
      inner.erase();
    }
  }

  /// Rewrites `value` to its per-rank type, split along `dim` (in
  /// `blocks` blocks).
  LogicalResult split(Value value, int64_t dim, Operation *where,
                      int64_t blocks = 1) {
    auto type = cast<RankedTensorType>(value.getType());
    if (dim < 0 || dim >= type.getRank() ||
        type.getDimSize(dim) % (ranks * blocks) != 0)
      return where->emitError("cannot split dimension ")
             << dim << " of " << type << " over " << ranks << " ranks"
             << (blocks > 1 ? " in " + std::to_string(blocks) + " blocks"
                            : std::string());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= ranks;
    value.setType(type.clone(shape));
    layouts[value] = Layout::split(dim, blocks);
    return success();
  }

  /// `value` split as `like`.
  LogicalResult splitAs(Value value, Layout like, int64_t dim,
                        Operation *where) {
    return split(value, dim, where, like.blocks);
  }

  /// The whole of split `value`: all-gathered (and, for blocks, put back in
  /// block order), once, right after it.
  Value gather(Value value, Location loc, const std::string &why) {
    Value &whole = gathered[value];
    if (whole)
      return whole;
    Layout layout = layouts.lookup(value);
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[layout.dim] *= ranks;
    b.setInsertionPointAfterValue(value);
    Value result = AllGatherOp::create(
        b, loc, type.clone(shape), value, mesh, b.getStrArrayAttr({axis}),
        b.getI64IntegerAttr(layout.dim), b.getStringAttr(why));
    if (layout.blocks > 1) {
      // [.., ranks, blocks, chunk, ..] -> [.., blocks, ranks, chunk, ..]
      SmallVector<int64_t> view(type.getShape());
      view[layout.dim] /= layout.blocks;
      view.insert(view.begin() + layout.dim, {ranks, layout.blocks});
      SmallVector<int64_t> perm(view.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[layout.dim], perm[layout.dim + 1]);
      result = ReshapeOp::create(b, loc, type.clone(view), result);
      result = TransposeOp::create(b, loc, result, perm);
      result = ReshapeOp::create(b, loc, type.clone(shape), result);
    }
    layouts[result] = Layout();
    whole = result;
    return result;
  }

  /// Tensor parallelism: an op that cannot work on its operands' layouts
  /// (a reshape that would mix heads, a softmax over a split dimension, a
  /// dropout that needs global indices) runs replicated on gathered
  /// operands, with a warning. Gathering a seed is an error: the weight
  /// layouts chosen are kept.
  LogicalResult partitionOrGather(Operation *op) {
    SmallVector<Value> operands(op->getOperands());
    SmallVector<Type> types(op->getResultTypes());
    std::string why;
    LogicalResult partitioned = success();
    {
      ScopedDiagnosticHandler capture(op->getContext(), [&](Diagnostic &diag) {
        if (diag.getSeverity() != DiagnosticSeverity::Error)
          return failure();
        why = diag.str();
        return success();
      });
      partitioned = partition(op);
    }
    if (succeeded(partitioned))
      return success();
    // Undo what the attempt changed, then gather.
    for (auto [use, original] : llvm::zip(op->getOpOperands(), operands)) {
      Value tried = use.get();
      use.set(original);
      if (tried != original && tried.use_empty() && tried.getDefiningOp() &&
          isa<SliceOp, ShardOp>(tried.getDefiningOp()))
        tried.getDefiningOp()->erase();
    }
    for (auto [result, type] : llvm::zip(op->getResults(), types)) {
      result.setType(type);
      layouts.erase(result);
    }
    std::string name = label(op);
    for (OpOperand &use : op->getOpOperands()) {
      if (layouts.lookup(use.get()).kind != Kind::Split)
        continue;
      if (pinned.contains(use.get()))
        return op->emitError(purpose + ": ")
               << name << " needs operand #" << use.getOperandNumber()
               << ", a sharded parameter, whole (" << why
               << "); the parameter layouts are pinned";
      use.set(gather(use.get(), op->getLoc(),
                     purpose + ": " + name + " needs its operand whole"));
    }
    materialize(op, /*mayScatter=*/false);
    op->emitWarning(purpose + ": ")
        << name << " runs replicated on gathered operands: " << why;
    return success();
  }

  /// Megatron's placement of the all-reduce: a partial sum that several
  /// ops read (the input gradient of a column-parallel projection, read by
  /// the norm's backward) is reduced once, where it is made, rather than
  /// carried into each reader's results.
  void reduceSharedPartials(Operation *op) {
    for (Value result : op->getResults()) {
      if (layouts.lookup(result).kind != Kind::Partial || result.hasOneUse() ||
          result.use_empty())
        continue;
      Value &whole = materialized[result];
      whole = sumOverAxis(result, op->getLoc(),
                          purpose + ": " + label(op) +
                              " makes a partial sum that several ops read",
                          /*mayScatter=*/true);
      result.replaceAllUsesExcept(whole, whole.getDefiningOp());
    }
  }

  Value allReduce(Value value, Location loc, const std::string &why,
                  CollectiveReduction kind = CollectiveReduction::Sum) {
    auto op = AllReduceOp::create(
        b, loc, value.getType(), value, mesh, b.getStrArrayAttr({axis}),
        CollectiveReductionAttr::get(b.getContext(), kind),
        b.getStringAttr(why));
    layouts[op.getResult()] = Layout();
    return op.getResult();
  }

  /// Sequence parallelism's form of an activation: reduce-scattered along
  /// the sequence rather than all-reduced.
  bool scattersAlongSequence(Value partial) {
    auto type = cast<RankedTensorType>(partial.getType());
    return sequenceLength > 0 && type.getRank() == 3 &&
           type.getDimSize(1) == sequenceLength && sequenceLength % ranks == 0;
  }

  /// The sum over the axis of `partial`, right after it: all-reduced, or
  /// with sequence parallelism (`mayScatter`), an activation's rank part
  /// of the sequence, reduce-scattered.
  Value sumOverAxis(Value partial, Location loc, const std::string &why,
                    bool mayScatter) {
    b.setInsertionPointAfterValue(partial);
    if (!mayScatter || !scattersAlongSequence(partial))
      return allReduce(partial, loc, why);
    auto type = cast<RankedTensorType>(partial.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[1] /= ranks;
    Value part = ReduceScatterOp::create(
        b, loc, type.clone(shape), partial, mesh, b.getStrArrayAttr({axis}),
        b.getI64IntegerAttr(1),
        b.getStringAttr(why + " (sequence-parallel: each rank keeps its "
                              "part of the sequence)"));
    layouts[part] = Layout::split(1);
    return part;
  }

  /// Sums the partial operands of `op`, which needs them whole (or, with
  /// `mayScatter`, split along the sequence): once per partial value,
  /// right after it, for all its uses.
  void materialize(Operation *op, bool mayScatter = true) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value partial = operand.get();
      if (layouts.lookup(partial).kind != Kind::Partial)
        continue;
      Value &whole = materialized[partial];
      if (!whole ||
          (!mayScatter && layouts.lookup(whole).kind != Kind::Replicated))
        whole = sumOverAxis(
            partial, op->getLoc(),
            purpose + ": " + label(op) +
                " needs the whole value of a partial sum over " +
                (batch ? std::string("the batch") : "'" + axis + "'"),
            mayScatter);
      operand.set(whole);
    }
  }

  /// Whether `value` is a splat constant zero (float).
  static bool isZero(Value value) {
    auto zeros = value.getDefiningOp<ConstantOp>();
    auto splat = zeros ? dyn_cast<SplatElementsAttr>(zeros.getValue())
                       : SplatElementsAttr();
    return splat && isa<FloatType>(splat.getElementType()) &&
           splat.getSplatValue<APFloat>().isZero();
  }

  bool any(Operation *op, Kind kind) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      return layouts.lookup(v).kind == kind;
    });
  }

  /// Whether `op` is linear in its partial operands given the others'
  /// layouts, so that its result is a partial sum too.
  bool linearInPartials(Operation *op) {
    if (!any(op, Kind::Partial) || any(op, Kind::Split))
      return false;
    bool allPartial = llvm::all_of(op->getOperands(), [&](Value v) {
      return layouts.lookup(v).kind == Kind::Partial;
    });
    if (isa<AddOp, SubOp, ConcatOp>(op))
      return allPartial;
    if (isa<MulOp, MatmulOp>(op))
      return !allPartial;
    if (auto div = dyn_cast<DivOp>(op))
      return layouts.lookup(div.getRhs()).kind == Kind::Replicated;
    if (auto gather = dyn_cast<GatherOp>(op))
      return layouts.lookup(gather.getIndices()).kind == Kind::Replicated;
    // Microbatches' gradients add up before a cast narrows them (bf16
    // gradients accumulate in f32); ranks' sums may travel narrow.
    if (auto cast = dyn_cast<CastOp>(op); cast && !rankIndexed)
      return !narrowsFloat(cast);
    return isa<NegOp, CastOp, ReshapeOp, TransposeOp, BroadcastOp, ReduceSumOp,
               SliceOp, SplitOp, ScatterAddOp>(op);
  }

  /// Whether `cast` converts floats to a narrower float type.
  static bool narrowsFloat(CastOp cast) {
    auto from = dyn_cast<FloatType>(cast.getInput().getType().getElementType());
    auto to = dyn_cast<FloatType>(cast.getType().getElementType());
    return from && to && to.getWidth() < from.getWidth();
  }

  /// Whether replicated `value` holds the same values at every index of
  /// dimension `dim` (a broadcast along it, an iota along another
  /// dimension, a splat, or elementwise ops and slices of such values).
  bool uniformAlong(Value value, int64_t dim) {
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
  /// as `like`: a slice of a value uniform along `dim` (any part will do),
  /// otherwise, outside the batch partitioner, the rank's own part
  /// (dtc.shard; the batch shards of gradient accumulation have no rank).
  LogicalResult localize(OpOperand &use, int64_t dim, Layout like = {}) {
    Value value = use.get();
    auto type = cast<RankedTensorType>(value.getType());
    Operation *owner = use.getOwner();
    SmallVector<int64_t> sizes(type.getShape());
    sizes[dim] /= ranks;
    if (sizes[dim] * ranks != type.getDimSize(dim) ||
        sizes[dim] % like.blocks != 0)
      return owner->emitError("cannot split operand #")
             << use.getOperandNumber() << " of type " << type
             << " along dimension " << dim << " over " << ranks << " ranks";
    b.setInsertionPoint(owner);
    Value part;
    if (uniformAlong(value, dim)) {
      SmallVector<int64_t> starts(type.getRank(), 0),
          strides(type.getRank(), 1);
      part = SliceOp::create(b, owner->getLoc(), value, starts, sizes, strides);
    } else if (!batch) {
      part =
          ShardOp::create(b, owner->getLoc(), type.clone(sizes), value, mesh,
                          b.getStrArrayAttr({axis}), b.getI64IntegerAttr(dim),
                          b.getI64IntegerAttr(like.blocks), StringAttr());
    } else {
      return owner->emitError("cannot partition '")
             << owner->getName() << "' over the batch: operand #"
             << use.getOperandNumber() << " of type " << type
             << " spans the batch but is not split";
    }
    use.set(part);
    layouts[part] = Layout::split(dim, like.blocks);
    return success();
  }

  /// Elementwise ops with numpy broadcasting: the split dimension aligns
  /// from the right.
  LogicalResult partitionBroadcasting(Operation *op) {
    int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    int64_t target = -1;
    Layout like;
    for (Value v : op->getOperands()) {
      Layout l = layouts.lookup(v);
      if (l.kind != Kind::Split)
        continue;
      int64_t aligned =
          l.dim + rank - cast<RankedTensorType>(v.getType()).getRank();
      if (target >= 0 && (target != aligned || like.blocks != l.blocks))
        return op->emitError("operands are split along different dimensions");
      target = aligned;
      like = l;
    }
    if (target < 0)
      return success(); // all replicated
    for (OpOperand &use : op->getOpOperands()) {
      if (layouts.lookup(use.get()).kind != Kind::Replicated)
        continue;
      auto type = cast<RankedTensorType>(use.get().getType());
      int64_t at = target - (rank - type.getRank());
      if (at >= 0 && type.getDimSize(at) != 1 &&
          failed(localize(use, at, like)))
        return failure();
    }
    return split(op->getResult(0), target, op, like.blocks);
  }

  /// A matmul's replicated operand that has the result's batch dimension
  /// `dim` (of `rank`) unbroadcast: this rank's part of it.
  LogicalResult localizeBatchDim(OpOperand &use, int64_t dim, int64_t rank,
                                 Layout like) {
    auto type = cast<RankedTensorType>(use.get().getType());
    int64_t at = dim - (rank - type.getRank());
    if (at < 0 || at >= type.getRank() - 2 || type.getDimSize(at) == 1)
      return success();
    return localize(use, at, like);
  }

  LogicalResult partitionMatmul(MatmulOp op) {
    int64_t l = op.getLhs().getType().getRank(),
            r = op.getRhs().getType().getRank();
    int64_t o = op.getType().getRank();
    bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
    int64_t lhsM = tl ? l - 1 : l - 2, lhsK = tl ? l - 2 : l - 1;
    int64_t rhsK = tr ? r - 1 : r - 2, rhsN = tr ? r - 2 : r - 1;
    Layout a = layouts.lookup(op.getLhs()), c = layouts.lookup(op.getRhs());
    bool aSplit = a.kind == Kind::Split, cSplit = c.kind == Kind::Split;
    if (aSplit && cSplit) {
      if (a.dim == lhsK && c.dim == rhsK && a.blocks == c.blocks) {
        layouts[op.getResult()] = Layout::partial(); // a split contraction
        return success();
      }
      if (a.dim < l - 2 && c.dim < r - 2 && a.dim + o - l == c.dim + o - r &&
          a.blocks == c.blocks)
        return splitAs(op.getResult(), a, a.dim + o - l, op);
    } else if (aSplit) {
      if (a.dim < l - 2) {
        if (failed(localizeBatchDim(op->getOpOperand(1), a.dim + o - l, o, a)))
          return failure();
        return splitAs(op.getResult(), a, a.dim + o - l, op);
      }
      if (a.dim == lhsM)
        return splitAs(op.getResult(), a, o - 2, op);
      if (a.dim == lhsK && !batch) { // the rhs's part of the contraction
        if (failed(localize(op->getOpOperand(1), rhsK, a)))
          return failure();
        layouts[op.getResult()] = Layout::partial();
        return success();
      }
    } else if (cSplit) {
      if (c.dim < r - 2) {
        if (failed(localizeBatchDim(op->getOpOperand(0), c.dim + o - r, o, c)))
          return failure();
        return splitAs(op.getResult(), c, c.dim + o - r, op);
      }
      if (c.dim == rhsN)
        return splitAs(op.getResult(), c, o - 1, op);
      if (c.dim == rhsK && !batch) {
        if (failed(localize(op->getOpOperand(0), lhsK, c)))
          return failure();
        layouts[op.getResult()] = Layout::partial();
        return success();
      }
    } else {
      return success();
    }
    if (!batch && aSplit && cSplit) {
      // An operand split along the contraction without its partner is
      // gathered; else one split along rows or columns rather than along
      // a batch dimension (attention heads); else the lhs -- an activation
      // split along tokens (sequence parallelism) meeting a weight split
      // along features.
      bool aBatch = a.dim < l - 2, cBatch = c.dim < r - 2;
      bool lhs = a.dim == lhsK      ? true
                 : c.dim == rhsK    ? false
                 : aBatch != cBatch ? !aBatch
                                    : true;
      OpOperand &use = op->getOpOperand(lhs ? 0 : 1);
      use.set(gather(use.get(), op.getLoc(),
                     purpose + ": " + label(op) + " needs its " +
                         (lhs ? "lhs" : "rhs") + " whole (split unlike " +
                         (lhs ? "the rhs" : "the lhs") + ")"));
      return partitionMatmul(op);
    }
    return op.emitError("cannot partition this matmul over the ")
           << (batch ? "batch" : "'" + axis + "' axis");
  }

  /// Reductions: over the split dimension the result is a partial sum (a
  /// mean also divides by the rank count); otherwise the split moves.
  template <typename OpTy>
  LogicalResult partitionReduction(OpTy op, bool mean) {
    Layout in = layouts.lookup(op.getInput());
    if (in.kind == Kind::Partial) {
      layouts[op.getResult()] = Layout::partial();
      return success();
    }
    if (in.kind != Kind::Split)
      return success();
    ArrayRef<int64_t> dims = op.getDims();
    if (!llvm::is_contained(dims, in.dim)) {
      int64_t removed =
          op.getKeepDims()
              ? 0
              : llvm::count_if(dims, [&](int64_t d) { return d < in.dim; });
      return splitAs(op.getResult(), in, in.dim - removed, op);
    }
    if (!isa<ReduceSumOp, ReduceMeanOp>(op))
      return op.emitError("a max or min over ")
             << splitName() << " is not partitioned yet";
    layouts[op.getResult()] = Layout::partial();
    if (mean) { // the mean of N equal shards is the mean of their means
      b.setInsertionPointAfter(op);
      auto type = cast<RankedTensorType>(op.getResult().getType());
      Value inv = ConstantOp::create(
          b, op.getLoc(),
          DenseElementsAttr::get(
              RankedTensorType::get({}, type.getElementType()),
              b.getFloatAttr(type.getElementType(), 1.0 / ranks)));
      Value scaled = MulOp::create(b, op.getLoc(), op.getResult(), inv);
      op.getResult().replaceAllUsesExcept(scaled, scaled.getDefiningOp());
      layouts[scaled] = Layout::partial();
      inserted.insert(scaled.getDefiningOp());
    }
    return success();
  }

  std::string splitName() const {
    return batch ? "the batch" : "the split over '" + axis + "'";
  }

  /// Ops acting along one dimension: the split must be elsewhere.
  LogicalResult partitionAlong(Operation *op, int64_t opDim, bool before) {
    Layout in = layouts.lookup(op->getOperand(0));
    if (in.kind != Kind::Split)
      return success();
    if (before ? in.dim >= opDim : in.dim == opDim)
      return op->emitError("works along dimension ")
             << opDim << " but " << splitName() << " is along dimension "
             << in.dim << ": each rank would see only part of it";
    for (Value result : op->getResults())
      if (failed(splitAs(result, in, in.dim, op)))
        return failure();
    return success();
  }

  /// A log-softmax over the split dimension (the vocabulary-parallel
  /// cross-entropy): each rank normalizes its part with the maximum and the
  /// sum of exponentials all-reduced over the axis, never gathering the
  /// logits -- two all-reduces of one value per row.
  LogicalResult partitionSplitLogSoftmax(LogSoftmaxOp op) {
    Layout in = layouts.lookup(op.getInput());
    int64_t dim = op.getDim();
    b.setInsertionPoint(op);
    OpEmitter e(b, op.getLoc());
    std::string what =
        purpose + ": " + label(op) + " split over '" + axis + "'";
    Value x = op.getInput();
    Value max =
        allReduce(ReduceMaxOp::create(b, e.loc, x, {dim}, true), e.loc,
                  what + ": the maximum of each row", CollectiveReduction::Max);
    Value shifted = e.sub(x, max);
    Value sum =
        allReduce(ReduceSumOp::create(b, e.loc, e.exp(shifted), {dim}, true),
                  e.loc, what + ": the sum of exponentials of each row");
    Value result = e.sub(shifted, e.log(sum));
    op.getResult().replaceAllUsesWith(result);
    op.erase();
    layouts[result] = in;
    return success();
  }

  Value scalar(Location loc, Type type, int64_t value) {
    auto shaped = RankedTensorType::get({}, type);
    Attribute attr = isa<IntegerType>(type)
                         ? Attribute(b.getIntegerAttr(type, value))
                         : Attribute(b.getFloatAttr(type, value));
    return ConstantOp::create(b, loc, DenseElementsAttr::get(shaped, attr));
  }

  /// For `ids` into a table whose `rows` rows per rank are split over the
  /// axis: the ids relative to this rank's first row, zero where they fall
  /// outside it, and where they fall inside.
  std::pair<Value, Value> localRows(Value ids, int64_t rows, Location loc) {
    OpEmitter e(b, loc);
    Type idType = cast<RankedTensorType>(ids.getType()).getElementType();
    Value local = e.sub(ids, chunkStart(rows, idType, loc));
    Value inside =
        AndOp::create(b, loc,
                      CompareOp::create(b, loc, ComparisonPredicate::GE, local,
                                        scalar(loc, idType, 0)),
                      CompareOp::create(b, loc, ComparisonPredicate::LT, local,
                                        scalar(loc, idType, rows)));
    Value safe =
        SelectOp::create(b, loc, inside, local, scalar(loc, idType, 0));
    return {safe, inside};
  }

  /// Where this rank's chunk of `size` starts along a split of `size`
  /// times the ranks over this axis.
  Value chunkStart(int64_t size, Type type, Location loc) {
    return dtc::chunkStart(b, loc, size, ranks, type, mesh,
                           b.getStrArrayAttr({axis}));
  }

  /// `inside` (the ids' shape) as a mask of rows of `like`.
  Value rowMask(Value inside, RankedTensorType like, Location loc) {
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(inside.getType()).getShape());
    shape.resize(like.getRank(), 1);
    return ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, b.getI1Type()), inside);
  }

  /// A lookup in a table split along its rows (a vocabulary-parallel
  /// embedding): each rank looks up the ids in its rows and zeros the
  /// others, and the sum over the axis is the lookup.
  LogicalResult partitionSplitTableGather(GatherOp op) {
    auto table = op.getInput().getType();
    b.setInsertionPoint(op);
    auto [safe, inside] =
        localRows(op.getIndices(), table.getDimSize(0), op.getLoc());
    op.getIndicesMutable().assign(safe);
    b.setInsertionPointAfter(op);
    Value masked = SelectOp::create(
        b, op.getLoc(), rowMask(inside, op.getType(), op.getLoc()),
        op.getResult(), scalar(op.getLoc(), table.getElementType(), 0));
    Value whole =
        sumOverAxis(masked, op.getLoc(),
                    purpose + ": " + label(op) + " from rows split over '" +
                        axis + "' (each rank has looked up its own)",
                    /*mayScatter=*/true);
    op.getResult().replaceAllUsesExcept(whole, masked.getDefiningOp());
    return success();
  }

  /// Whether `value` ends up (through adds, casts and collectives over
  /// other axes) as a result the caller wants split along dimension 0.
  bool becomesRowSplitResult(Value value) {
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp>(user)) {
        std::optional<SplitArgument> wanted =
            resultSplit(use.getOperandNumber());
        if (wanted && wanted->dim == 0 && wanted->blocks == 1)
          return true;
      } else if ((isa<AddOp, CastOp>(user) ||
                  (isa<AllReduceOp>(user) &&
                   !llvm::is_contained(cast<AllReduceOp>(user).getAxes(),
                                       b.getStringAttr(axis)))) &&
                 user->getResult(0).getType() == value.getType() &&
                 becomesRowSplitResult(user->getResult(0))) {
        return true;
      }
    }
    return false;
  }

  /// The gradient of a vocabulary-parallel embedding: each rank adds the
  /// updates of its own rows into its part of the table, so that the
  /// gradient is born split (and no rank builds the whole table).
  LogicalResult partitionRowSplitScatter(ScatterAddOp op) {
    auto type = cast<RankedTensorType>(op.getType());
    b.setInsertionPoint(op);
    auto [safe, inside] =
        localRows(op.getIndices(), type.getDimSize(0) / ranks, op.getLoc());
    op.getIndicesMutable().assign(safe);
    auto updates = cast<RankedTensorType>(op.getUpdates().getType());
    op.getUpdatesMutable().assign(SelectOp::create(
        b, op.getLoc(), rowMask(inside, updates, op.getLoc()), op.getUpdates(),
        scalar(op.getLoc(), updates.getElementType(), 0)));
    auto table = cast<RankedTensorType>(op.getInput().getType());
    SmallVector<int64_t> shape(table.getShape());
    shape[0] /= ranks;
    op.getInputMutable().assign(ConstantOp::create(
        b, op.getLoc(),
        DenseElementsAttr::get(table.clone(shape),
                               b.getZeroAttr(table.getElementType()))));
    return split(op.getResult(), 0, op);
  }

  /// A split into as many equal pieces as the input's blocks, along the
  /// split dimension: each rank's piece is its chunk of the piece (the
  /// fused QKV's q, k and v, each by heads).
  LogicalResult partitionSplitOfBlocks(SplitOp op) {
    Layout in = layouts.lookup(op.getInput());
    ArrayRef<int64_t> sizes = op.getSizes();
    if (in.kind != Kind::Split || in.dim != static_cast<int64_t>(op.getDim()) ||
        in.blocks != static_cast<int64_t>(sizes.size()) ||
        !llvm::all_equal(sizes))
      return partitionAlong(op, op.getDim(), false);
    SmallVector<int64_t> local(sizes.size(), sizes[0] / ranks);
    for (Value result : op.getResults())
      if (failed(split(result, in.dim, op)))
        return failure();
    op.setSizes(local);
    return success();
  }

  /// Collectives over other axes keep this axis's layout of dimensions
  /// they do not touch.
  LogicalResult partitionCollective(Operation *op, std::optional<int64_t> dim) {
    Layout in = layouts.lookup(op->getOperand(0));
    if (dim && *dim == in.dim)
      return op->emitError("a collective along ")
             << splitName() << " (dimension " << in.dim << ")";
    return splitAs(op->getResult(0), in, in.dim, op);
  }

  LogicalResult partition(Operation *op) {
    if (inserted.contains(op))
      return success();
    if (any(op, Kind::Partial)) {
      if (linearInPartials(op)) {
        for (Value result : op->getResults())
          layouts[result] = Layout::partial();
        return success();
      }
      materialize(op);
    }
    if (auto scatter = dyn_cast<ScatterAddOp>(op);
        scatter && !batch && scatter.getDim() == 0 &&
        layouts.lookup(scatter.getIndices()).kind == Kind::Replicated &&
        isZero(scatter.getInput()) && becomesRowSplitResult(scatter)) {
      if (layouts.lookup(scatter.getUpdates()).kind == Kind::Split)
        scatter.getUpdatesMutable().assign(
            gather(scatter.getUpdates(), op->getLoc(),
                   purpose + ": " + label(op) +
                       " adds every token's update into the rank's rows"));
      return partitionRowSplitScatter(scatter);
    }
    if (auto shard = dyn_cast<ShardOp>(op);
        shard && shard.getAxes() == b.getStrArrayAttr({axis}) &&
        !any(op, Kind::Split)) {
      // A slice the caller placed: the rank's part along this axis.
      layouts[shard.getResult()] =
          Layout::split(shard.getDim(), shard.getBlocks());
      return success();
    }
    if (!any(op, Kind::Split))
      return success();
    if (isElementwise(op))
      return partitionBroadcasting(op);
    if (auto matmul = dyn_cast<MatmulOp>(op))
      return partitionMatmul(matmul);
    if (auto sum = dyn_cast<ReduceSumOp>(op))
      return partitionReduction(sum, false);
    if (auto mean = dyn_cast<ReduceMeanOp>(op))
      return partitionReduction(mean, true);
    if (auto max = dyn_cast<ReduceMaxOp>(op))
      return partitionReduction(max, false);
    if (auto min = dyn_cast<ReduceMinOp>(op))
      return partitionReduction(min, false);
    if (auto softmax = dyn_cast<SoftmaxOp>(op))
      return partitionAlong(op, softmax.getDim(), false);
    if (auto softmax = dyn_cast<LogSoftmaxOp>(op)) {
      Layout in = layouts.lookup(softmax.getInput());
      if (!batch && in.dim == static_cast<int64_t>(softmax.getDim()))
        return partitionSplitLogSoftmax(softmax);
      return partitionAlong(op, softmax.getDim(), false);
    }
    if (auto norm = dyn_cast<LayerNormOp>(op))
      return partitionAlong(op, norm.getDim(), true);
    if (auto norm = dyn_cast<RMSNormOp>(op))
      return partitionAlong(op, norm.getDim(), true);
    if (auto split_ = dyn_cast<SplitOp>(op))
      return partitionSplitOfBlocks(split_);
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      Layout in = layouts.lookup(transpose.getInput());
      ArrayRef<int64_t> perm = transpose.getPermutation();
      return splitAs(transpose.getResult(), in,
                     std::find(perm.begin(), perm.end(), in.dim) - perm.begin(),
                     op);
    }
    if (isa<AllReduceOp>(op))
      return partitionCollective(op, std::nullopt);
    if (auto gather = dyn_cast<AllGatherOp>(op))
      return partitionCollective(op, gather.getDim());
    if (auto scatter = dyn_cast<ReduceScatterOp>(op))
      return partitionCollective(op, scatter.getDim());
    if (auto shard = dyn_cast<ShardOp>(op))
      return partitionCollective(op, shard.getDim());
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return partitionReshape(reshape);
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      Layout in = layouts.lookup(broadcast.getInput());
      return splitAs(broadcast.getResult(), in,
                     in.dim + broadcast.getType().getRank() -
                         broadcast.getInput().getType().getRank(),
                     op);
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      Layout in = layouts.lookup(gather.getInput());
      Layout idx = layouts.lookup(gather.getIndices());
      if (in.kind == Kind::Replicated)
        return splitAs(gather.getResult(), idx, gather.getDim() + idx.dim, op);
      if (!batch && idx.kind == Kind::Replicated && gather.getDim() == 0 &&
          in.dim == 0 && in.blocks == 1)
        return partitionSplitTableGather(gather);
      return op->emitError("cannot partition a gather from a split table");
    }
    if (auto scatter = dyn_cast<ScatterAddOp>(op)) {
      Layout idx = layouts.lookup(scatter.getIndices());
      Layout updates = layouts.lookup(scatter.getUpdates());
      int64_t idxRank =
          cast<RankedTensorType>(scatter.getIndices().getType()).getRank();
      // Updates split along the indices' dimensions: this rank's indices.
      if (!batch && idx.kind == Kind::Replicated &&
          updates.kind == Kind::Split && scatter.getDim() == 0 &&
          updates.dim < idxRank && updates.blocks == 1) {
        if (failed(localize(op->getOpOperand(1), updates.dim)))
          return failure();
        idx = layouts.lookup(scatter.getIndices());
      }
      if (idx.kind != Kind::Split ||
          layouts.lookup(scatter.getInput()).kind != Kind::Replicated ||
          !isZero(scatter.getInput()))
        return op->emitError("cannot partition this scatter_add");
      layouts[scatter.getResult()] = Layout::partial(); // each rank's updates
      return success();
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      return partitionSlice(slice);
    if (auto update = dyn_cast<UpdateSliceOp>(op))
      return partitionUpdateSlice(update);
    if (auto concat = dyn_cast<ConcatOp>(op))
      return partitionConcat(concat);
    if (auto dropout = dyn_cast<DropoutOp>(op))
      return partitionDropout(dropout);
    return op->emitError("'")
           << op->getName() << "' cannot be partitioned over "
           << (batch ? "the batch" : "'" + axis + "'") << " yet";
  }

  /// Dropout on a part of a tensor draws by the elements' indices in the
  /// whole: the op learns the whole shape and where the part starts (this
  /// rank's chunk along the split dimension, added to other axes' offsets),
  /// so every layout draws one device's mask.
  LogicalResult partitionDropout(DropoutOp op) {
    Layout in = layouts.lookup(op.getInput());
    if (!rankIndexed)
      return op.emitError("dropout is not partitioned for gradient "
                          "accumulation yet (its microbatches have no rank "
                          "to index by)");
    if (in.kind != Kind::Split || in.blocks != 1 ||
        layouts.lookup(op.getStep()).kind != Kind::Replicated)
      return op.emitError("cannot partition this dropout");
    auto type = op.getInput().getType();
    int64_t rank = type.getRank(), dim = in.dim, local = type.getDimSize(dim);
    SmallVector<int64_t> whole(type.getShape());
    whole[dim] *= ranks;
    if (auto global = op.getGlobalShape())
      whole.assign(global->begin(), global->end());
    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    Type i64 = b.getI64Type();
    Value first = chunkStart(local, i64, loc);
    SmallVector<int64_t> unit(rank, 0);
    unit[dim] = 1;
    Value along = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({rank}, i64),
                               ArrayRef<int64_t>(unit)));
    Value offset = MulOp::create(b, loc, along, first);
    if (Value previous = op.getOffset())
      offset = AddOp::create(b, loc, previous, offset);
    op.getOffsetMutable().assign(offset);
    op.setGlobalShape(whole);
    return split(op.getResult(), dim, op);
  }

  /// A concat of values split alike along another dimension stays split;
  /// along the split dimension, equal contiguous splits make a split in
  /// blocks (the gradient of a fused QKV from those of q, k and v).
  LogicalResult partitionConcat(ConcatOp op) {
    Layout first = layouts.lookup(op.getInputs()[0]);
    int64_t along = op.getDim();
    bool blocks = first.dim == along && first.blocks == 1;
    for (Value v : op.getInputs()) {
      Layout l = layouts.lookup(v);
      if (l.kind != Kind::Split || l.dim != first.dim ||
          l.blocks != first.blocks || (first.dim == along && !blocks) ||
          (blocks && v.getType() != op.getInputs()[0].getType()))
        return op->emitError("cannot partition this concat over ")
               << splitName();
    }
    if (blocks)
      return split(op.getResult(), along, op, op.getInputs().size());
    return splitAs(op.getResult(), first, first.dim, op);
  }

  /// The split dimension of a reshape's result: the one that starts where
  /// the input's split dimension starts and is that dimension, that
  /// dimension merged with inner ones, or its leading factor (heads out of
  /// a hidden dimension), with every rank's chunk contiguous in it.
  LogicalResult partitionReshape(ReshapeOp op) {
    Layout layout = layouts.lookup(op.getInput());
    int64_t d = layout.dim;
    ArrayRef<int64_t> in = op.getInput().getType().getShape();
    ArrayRef<int64_t> out = op.getType().getShape();
    int64_t whole = in[d] * ranks, before = 1;
    for (int64_t i = 0; i < d; ++i)
      before *= in[i];
    int64_t prefix = 1;
    for (int64_t j = 0; j < static_cast<int64_t>(out.size()); ++j) {
      if (prefix == before) {
        if (out[j] % whole == 0) // the dimension, possibly merged
          return splitAs(op.getResult(), layout, j, op);
        if (whole % out[j] == 0 && out[j] % (ranks * layout.blocks) == 0)
          return splitAs(op.getResult(), layout, j, op); // its leading factor
      }
      prefix *= out[j];
      if (prefix > before)
        break;
    }
    return op.emitError("cannot follow ")
           << splitName() << " through this reshape of " << in.size()
           << "-d to " << out.size() << "-d";
  }

  LogicalResult partitionSlice(SliceOp op) {
    int64_t d = layouts.lookup(op.getInput()).dim;
    int64_t global = op.getInput().getType().getDimSize(d) * ranks;
    if (op.getStarts()[d] != 0 || op.getStrides()[d] != 1 ||
        op.getSizes()[d] != global)
      return op.emitError("cannot slice along ") << splitName();
    SmallVector<int64_t> sizes(op.getSizes());
    sizes[d] /= ranks;
    op.setSizes(sizes);
    return splitAs(op.getResult(), layouts.lookup(op.getInput()), d, op);
  }

  LogicalResult partitionUpdateSlice(UpdateSliceOp op) {
    Layout u = layouts.lookup(op.getUpdate()),
           in = layouts.lookup(op.getInput());
    if (u.kind == Kind::Split && in.kind == Kind::Split && u.dim == in.dim &&
        op.getStarts()[u.dim] == 0 && op.getStrides()[u.dim] == 1 &&
        op.getUpdate().getType().getDimSize(u.dim) ==
            op.getInput().getType().getDimSize(u.dim))
      return split(op.getResult(), u.dim, op);
    if (u.kind == Kind::Split && in.kind == Kind::Replicated) {
      OpOperand &use = op->getOpOperand(1);
      if (failed(localize(use, u.dim)))
        return failure();
      return split(op.getResult(), u.dim, op);
    }
    return op.emitError("cannot partition this update_slice over the batch");
  }

  func::FuncOp func;
  int64_t ranks;
  FlatSymbolRefAttr mesh;
  std::string axis, purpose;
  /// Splitting the batch (no seeds, no rank-dependent slices, results
  /// whole) rather than seeded arguments.
  bool batch;
  ArrayRef<SplitArgument> seeds;
  llvm::function_ref<std::optional<SplitArgument>(unsigned)> resultSplit;
  /// Sequence parallelism: partial activations [batch, sequence, features]
  /// of this sequence length are reduce-scattered along the sequence.
  int64_t sequenceLength;
  /// Whether the shards are ranks of a real mesh (not gradient
  /// accumulation's microbatches), so that values may depend on the rank.
  bool rankIndexed = true;
  OpBuilder b;
  llvm::DenseMap<Value, Layout> layouts;
  llvm::DenseMap<Value, Value> materialized, gathered;
  llvm::DenseSet<Operation *> inserted;
  llvm::DenseSet<Value> pinned;
};

} // namespace

LogicalResult mlir::dtc::partitionBatch(func::FuncOp func, int64_t shards,
                                        FlatSymbolRefAttr mesh, StringRef axis,
                                        StringRef purpose, bool rankIndexed) {
  Partitioner partitioner(func, shards, mesh, axis, purpose);
  partitioner.setRankIndexed(rankIndexed);
  return partitioner.run();
}

LogicalResult mlir::dtc::partitionOverAxis(
    func::FuncOp func, int64_t ranks, FlatSymbolRefAttr mesh, StringRef axis,
    StringRef purpose, ArrayRef<SplitArgument> seeds,
    llvm::function_ref<std::optional<SplitArgument>(unsigned)> resultSplit,
    int64_t sequenceLength) {
  return Partitioner(func, ranks, mesh, axis, purpose, seeds, resultSplit,
                     sequenceLength)
      .run();
}

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
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto out = func.getResultAttrOfType<StringAttr>(i, kOutputAttrName);
        out && out.getValue() == "loss")
      work.push_back(ret.getOperand(i));
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (def && forward.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  return forward;
}

Value mlir::dtc::chunkStart(OpBuilder &b, Location loc, int64_t partSize,
                            int64_t ranks, Type type, FlatSymbolRefAttr mesh,
                            ArrayAttr axes) {
  Value indices = IotaOp::create(
      b, loc, RankedTensorType::get({partSize * ranks}, type), 0);
  Value mine = ShardOp::create(b, loc, RankedTensorType::get({partSize}, type),
                               indices, mesh, axes, b.getI64IntegerAttr(0),
                               b.getI64IntegerAttr(1), StringAttr());
  return ReshapeOp::create(b, loc, RankedTensorType::get({}, type),
                           SliceOp::create(b, loc, mine, {0}, {1}, {1}));
}

LogicalResult mlir::dtc::scatterInsteadOfSum(AllReduceOp sum,
                                             RewriterBase &rewriter) {
  if (sum.getKind() != CollectiveReduction::Sum || sum->use_empty())
    return failure();
  auto first = dyn_cast<ShardOp>(*sum->user_begin());
  if (!first || first.getBlocks() != 1 ||
      !llvm::all_of(sum->getUsers(), [&](Operation *user) {
        auto shard = dyn_cast<ShardOp>(user);
        return shard && shard.getAxes() == sum.getAxes() &&
               shard.getDim() == first.getDim() && shard.getBlocks() == 1;
      }))
    return failure();
  rewriter.setInsertionPoint(sum);
  StringAttr why = sum.getReasonAttr();
  Value part = ReduceScatterOp::create(
      rewriter, sum.getLoc(), first.getType(), sum.getInput(),
      sum.getMeshAttr(), sum.getAxes(), first.getDimAttr(),
      rewriter.getStringAttr((why ? why.str() + "; " : std::string()) +
                             "each rank keeps its part"));
  for (Operation *user : llvm::to_vector(sum->getUsers()))
    rewriter.replaceOp(user, part);
  rewriter.eraseOp(sum);
  return success();
}

LogicalResult mlir::dtc::reinferResultTypes(Operation *op,
                                            SmallVectorImpl<Value> &changed) {
  SmallVector<Type> inferred;
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (auto cast = dyn_cast<CastOp>(op)) {
    // The operand's shape in the cast's element type.
    inferred.push_back(
        cast.getInput().getType().clone(cast.getType().getElementType()));
  } else if (!infer || failed(infer.inferReturnTypes(
                           op->getContext(), op->getLoc(), op->getOperands(),
                           op->getAttrDictionary(), op->getPropertiesStorage(),
                           op->getRegions(), inferred)))
    return failure();
  for (auto [result, type] : llvm::zip(op->getResults(), inferred))
    if (result.getType() != type) {
      result.setType(type);
      changed.push_back(result);
    }
  return success();
}

FlatSymbolRefAttr mlir::dtc::meshWithAxis(ModuleOp module, StringRef axis,
                                          int64_t size) {
  constexpr llvm::StringLiteral name = "mesh";
  OpBuilder b(module.getBodyRegion());
  auto mesh = module.lookupSymbol<MeshOp>(name);
  if (!mesh) {
    MeshOp::create(b, module.getLoc(), name, b.getStrArrayAttr({axis}),
                   b.getDenseI64ArrayAttr({size}));
  } else if (int64_t existing = mesh.axisSize(axis); existing < 0) {
    SmallVector<Attribute> axes(mesh.getAxes().begin(), mesh.getAxes().end());
    SmallVector<int64_t> sizes(mesh.getSizes());
    axes.push_back(b.getStringAttr(axis));
    sizes.push_back(size);
    mesh.setAxesAttr(b.getArrayAttr(axes));
    mesh.setSizes(sizes);
  } else if (existing != size) {
    module.emitError("mesh axis '")
        << axis << "' has size " << existing << ", not " << size;
    return {};
  }
  return FlatSymbolRefAttr::get(module.getContext(), name);
}

/// `old` (or nothing) with dimension `dim` of a rank-`rank` tensor also
/// split over `axis` in `blocks` blocks.
static ShardingAttr withSplit(MLIRContext *context, ShardingAttr old,
                              int64_t rank, FlatSymbolRefAttr mesh, int64_t dim,
                              StringRef axis, int64_t blocks) {
  Builder b(context);
  SmallVector<Attribute> dims(rank, b.getArrayAttr({}));
  SmallVector<int64_t> allBlocks(rank, 1);
  if (old) {
    dims.assign(old.getDims().begin(), old.getDims().end());
    for (int64_t d = 0; d < rank; ++d)
      allBlocks[d] = old.blocksOf(d);
  }
  SmallVector<Attribute> axes(cast<ArrayAttr>(dims[dim]).begin(),
                              cast<ArrayAttr>(dims[dim]).end());
  axes.push_back(b.getStringAttr(axis));
  dims[dim] = b.getArrayAttr(axes);
  allBlocks[dim] *= blocks;
  bool anyBlocks = llvm::any_of(allBlocks, [](int64_t n) { return n > 1; });
  return ShardingAttr::get(context, mesh, b.getArrayAttr(dims),
                           anyBlocks ? ArrayRef<int64_t>(allBlocks)
                                     : ArrayRef<int64_t>(),
                           ArrayAttr());
}

void mlir::dtc::recordSharding(func::FuncOp func, unsigned index,
                               FlatSymbolRefAttr mesh, int64_t dim,
                               StringRef axis, int64_t blocks) {
  int64_t rank =
      cast<RankedTensorType>(func.getArgument(index).getType()).getRank();
  func.setArgAttr(
      index, kShardingAttrName,
      withSplit(func.getContext(),
                func.getArgAttrOfType<ShardingAttr>(index, kShardingAttrName),
                rank, mesh, dim, axis, blocks));
}

void mlir::dtc::recordResultSharding(func::FuncOp func, unsigned index,
                                     FlatSymbolRefAttr mesh, int64_t dim,
                                     StringRef axis) {
  ShardingAttr base;
  if (auto grad = func.getResultAttrOfType<StringAttr>(index, kGradAttrName))
    if (BlockArgument param = getParameterArgument(func, grad.getValue()))
      base = func.getArgAttrOfType<ShardingAttr>(param.getArgNumber(),
                                                 kShardingAttrName);
  int64_t rank = cast<RankedTensorType>(func.getResultTypes()[index]).getRank();
  func.setResultAttr(
      index, kShardingAttrName,
      withSplit(func.getContext(), base, rank, mesh, dim, axis, 1));
}

//===- BatchPartitioner.cpp - a step's program for one batch shard --------===//
//
// A forward walk over the differentiated step that gives every value a
// layout -- split along one dimension over the shards, replicated, or a
// partial sum -- from its operands', rewrites split values to their
// per-shard types, and all-reduces partial sums where a non-linear use or a
// result needs the full value. The weight gradients' all-reduce thus falls
// out of the contractions over the batch, as in GSPMD. Data parallelism
// runs the shards on ranks; gradient accumulation runs them in sequence.
//
//===----------------------------------------------------------------------===//

#include "BatchPartitioner.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::dtc;

namespace {

enum class Kind { Replicated, Split, Partial };
struct Layout {
  Kind kind = Kind::Replicated;
  int64_t dim = -1;
  static Layout split(int64_t dim) { return {Kind::Split, dim}; }
  static Layout partial() { return {Kind::Partial, -1}; }
};

class Partitioner {
public:
  Partitioner(func::FuncOp func, int64_t ranks, FlatSymbolRefAttr mesh,
              StringRef axis, StringRef purpose)
      : func(func), ranks(ranks), mesh(mesh), axis(axis.str()),
        purpose(purpose.str()), b(func.getContext()) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    for (BlockArgument arg : body.getArguments()) {
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
    for (Operation *op : ops)
      if (failed(partition(op)))
        return failure();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      unsigned i = operand.getOperandNumber();
      Layout layout = layouts.lookup(operand.get());
      if (layout.kind == Kind::Split)
        return ret.emitError("result ")
               << i
               << " is split over the batch; dtc-data-parallel needs "
                  "replicated results";
      if (layout.kind == Kind::Partial) {
        std::string why = purpose + ": ";
        if (auto grad = func.getResultAttrOfType<StringAttr>(i, kGradAttrName))
          why +=
              "gradient of " + grad.str() + " (summed over the batch shards)";
        else
          why +=
              "result " + std::to_string(i) + " summed over the batch shards";
        Value &whole = materialized[operand.get()];
        if (!whole)
          whole = allReduce(operand.get(), ret.getLoc(), why);
        operand.set(whole);
      }
    }
    func.setFunctionType(FunctionType::get(
        func.getContext(), body.getArgumentTypes(), ret.getOperandTypes()));
    return verify(func);
  }

private:
  /// Rewrites `value` to its per-rank type, split along `dim`.
  LogicalResult split(Value value, int64_t dim, Operation *where) {
    auto type = cast<RankedTensorType>(value.getType());
    if (dim < 0 || dim >= type.getRank() || type.getDimSize(dim) % ranks != 0)
      return where->emitError("cannot split dimension ")
             << dim << " of " << type << " over " << ranks << " ranks";
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] /= ranks;
    value.setType(type.clone(shape));
    layouts[value] = Layout::split(dim);
    return success();
  }

  Value allReduce(Value value, Location loc, const std::string &why) {
    auto op = AllReduceOp::create(
        b, loc, value.getType(), value, mesh, b.getStrArrayAttr({axis}),
        CollectiveReductionAttr::get(b.getContext(), CollectiveReduction::Sum),
        b.getStringAttr(why));
    layouts[op.getResult()] = Layout();
    return op.getResult();
  }

  /// All-reduces the partial operands of `op`, which needs them whole: once
  /// per partial value, right after it, for all its uses.
  void materialize(Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value partial = operand.get();
      if (layouts.lookup(partial).kind != Kind::Partial)
        continue;
      Value &whole = materialized[partial];
      if (!whole) {
        b.setInsertionPointAfterValue(partial);
        whole = allReduce(
            partial, op->getLoc(),
            purpose + ": '" + op->getName().getStringRef().str() +
                "' needs the whole value of a partial sum over the batch");
      }
      operand.set(whole);
    }
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
    return isa<NegOp, CastOp, ReshapeOp, TransposeOp, BroadcastOp, ReduceSumOp,
               SliceOp, SplitOp, ScatterAddOp>(op);
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
    if (isa<BroadcastOp>(def) || def->hasTrait<OpTrait::Elementwise>() ||
        isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, CompareOp,
            SelectOp, AndOp, OrOp, XorOp, CastOp, SliceOp>(def))
      return llvm::all_of(def->getOperands(), [&](Value operand) {
        int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
        return uniformAlong(operand, dim - (type.getRank() - rank));
      });
    return false;
  }

  /// Gives `use` this rank's part of a replicated value that spans the
  /// batch at `dim`: any part, the value being uniform along `dim`.
  LogicalResult localize(OpOperand &use, int64_t dim) {
    Value value = use.get();
    auto type = cast<RankedTensorType>(value.getType());
    if (!uniformAlong(value, dim))
      return use.getOwner()->emitError("cannot partition '")
             << use.getOwner()->getName() << "' over the batch: operand #"
             << use.getOperandNumber() << " of type " << type
             << " spans the batch but is not split";
    SmallVector<int64_t> starts(type.getRank(), 0), strides(type.getRank(), 1);
    SmallVector<int64_t> sizes(type.getShape());
    sizes[dim] /= ranks;
    b.setInsertionPoint(use.getOwner());
    Value part = SliceOp::create(b, use.getOwner()->getLoc(), value, starts,
                                 sizes, strides);
    use.set(part);
    layouts[part] = Layout::split(dim);
    return success();
  }

  /// Elementwise ops with numpy broadcasting: the split dimension aligns
  /// from the right.
  LogicalResult partitionBroadcasting(Operation *op) {
    int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    int64_t target = -1;
    for (Value v : op->getOperands()) {
      Layout l = layouts.lookup(v);
      if (l.kind != Kind::Split)
        continue;
      int64_t aligned =
          l.dim + rank - cast<RankedTensorType>(v.getType()).getRank();
      if (target >= 0 && target != aligned)
        return op->emitError("operands are split along different dimensions");
      target = aligned;
    }
    if (target < 0)
      return success(); // all replicated
    for (OpOperand &use : op->getOpOperands()) {
      if (layouts.lookup(use.get()).kind != Kind::Replicated)
        continue;
      auto type = cast<RankedTensorType>(use.get().getType());
      int64_t at = target - (rank - type.getRank());
      if (at >= 0 && type.getDimSize(at) != 1 && failed(localize(use, at)))
        return failure();
    }
    return split(op->getResult(0), target, op);
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
      if (a.dim == lhsK && c.dim == rhsK) {
        layouts[op.getResult()] =
            Layout::partial(); // contraction over the batch
        return success();
      }
      if (a.dim < l - 2 && c.dim < r - 2 && a.dim + o - l == c.dim + o - r)
        return split(op.getResult(), a.dim + o - l, op);
    } else if (aSplit) {
      if (a.dim < l - 2)
        return split(op.getResult(), a.dim + o - l, op);
      if (a.dim == lhsM)
        return split(op.getResult(), o - 2, op);
    } else if (cSplit) {
      if (c.dim < r - 2)
        return split(op.getResult(), c.dim + o - r, op);
      if (c.dim == rhsN)
        return split(op.getResult(), o - 1, op);
    } else {
      return success();
    }
    return op.emitError("cannot partition this matmul over the batch");
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
      return split(op.getResult(), in.dim - removed, op);
    }
    if (!isa<ReduceSumOp, ReduceMeanOp>(op))
      return op.emitError("a max or min over the batch is not partitioned yet");
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

  /// Ops acting along one dimension: the split must be elsewhere.
  LogicalResult partitionAlong(Operation *op, int64_t opDim, bool before) {
    Layout in = layouts.lookup(op->getOperand(0));
    if (in.kind != Kind::Split)
      return success();
    if (before ? in.dim >= opDim : in.dim == opDim)
      return op->emitError("works along dimension ")
             << opDim << " but the batch split over the ranks is dimension "
             << in.dim << ": each rank would see only part of it";
    for (Value result : op->getResults())
      if (failed(split(result, in.dim, op)))
        return failure();
    return success();
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
    if (!any(op, Kind::Split) && !isa<ScatterAddOp>(op))
      return success();
    if (isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, CompareOp,
            SelectOp, AndOp, OrOp, XorOp>(op) ||
        op->hasTrait<OpTrait::Elementwise>() || isa<CastOp>(op))
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
    if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
      return partitionAlong(op, softmax.getDim(), false);
    if (auto norm = dyn_cast<LayerNormOp>(op))
      return partitionAlong(op, norm.getDim(), true);
    if (auto norm = dyn_cast<RMSNormOp>(op))
      return partitionAlong(op, norm.getDim(), true);
    if (auto split_ = dyn_cast<SplitOp>(op))
      return partitionAlong(op, split_.getDim(), false);
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      int64_t d = layouts.lookup(transpose.getInput()).dim;
      ArrayRef<int64_t> perm = transpose.getPermutation();
      return this->split(transpose.getResult(),
                         std::find(perm.begin(), perm.end(), d) - perm.begin(),
                         op);
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return partitionReshape(reshape);
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      Layout in = layouts.lookup(broadcast.getInput());
      return this->split(broadcast.getResult(),
                         in.dim + broadcast.getType().getRank() -
                             broadcast.getInput().getType().getRank(),
                         op);
    }
    if (auto gather = dyn_cast<GatherOp>(op)) {
      Layout in = layouts.lookup(gather.getInput());
      Layout idx = layouts.lookup(gather.getIndices());
      if (in.kind == Kind::Replicated)
        return this->split(gather.getResult(), gather.getDim() + idx.dim, op);
      return op->emitError("cannot partition a gather from a split table");
    }
    if (auto scatter = dyn_cast<ScatterAddOp>(op)) {
      Layout idx = layouts.lookup(scatter.getIndices());
      auto zeros = scatter.getInput().getDefiningOp<ConstantOp>();
      auto splat = zeros ? dyn_cast<SplatElementsAttr>(zeros.getValue())
                         : SplatElementsAttr();
      if (idx.kind != Kind::Split ||
          layouts.lookup(scatter.getInput()).kind != Kind::Replicated ||
          !splat || !splat.getSplatValue<APFloat>().isZero())
        return idx.kind == Kind::Split
                   ? op->emitError("cannot partition this scatter_add")
                   : success();
      layouts[scatter.getResult()] = Layout::partial(); // each rank's updates
      return success();
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      return partitionSlice(slice);
    if (auto update = dyn_cast<UpdateSliceOp>(op))
      return partitionUpdateSlice(update);
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      int64_t d = layouts.lookup(concat.getInputs()[0]).dim;
      for (Value v : concat.getInputs())
        if (layouts.lookup(v).kind != Kind::Split ||
            layouts.lookup(v).dim != d ||
            d == static_cast<int64_t>(concat.getDim()))
          return op->emitError("cannot partition this concat over the batch");
      return this->split(concat.getResult(), d, op);
    }
    return op->emitError("'")
           << op->getName() << "' cannot be partitioned over the batch yet";
  }

  /// The split dimension of a reshape's result: the one whose leading
  /// factor is the input's split dimension.
  LogicalResult partitionReshape(ReshapeOp op) {
    int64_t d = layouts.lookup(op.getInput()).dim;
    ArrayRef<int64_t> in = op.getInput().getType().getShape();
    ArrayRef<int64_t> out = op.getType().getShape();
    int64_t before = ranks; // the input is local: scale its dim back up
    for (int64_t i = 0; i < d; ++i)
      before *= in[i];
    before /= ranks;
    int64_t prefix = 1;
    for (int64_t j = 0; j < static_cast<int64_t>(out.size()); ++j) {
      if (prefix == before && out[j] % (in[d] * ranks) == 0)
        return split(op.getResult(), j, op);
      prefix *= out[j];
    }
    return op.emitError("cannot follow the batch through this reshape");
  }

  LogicalResult partitionSlice(SliceOp op) {
    int64_t d = layouts.lookup(op.getInput()).dim;
    int64_t global = op.getInput().getType().getDimSize(d) * ranks;
    if (op.getStarts()[d] != 0 || op.getStrides()[d] != 1 ||
        op.getSizes()[d] != global)
      return op.emitError("cannot slice the split (batch) dimension");
    SmallVector<int64_t> sizes(op.getSizes());
    sizes[d] /= ranks;
    op.setSizes(sizes);
    return split(op.getResult(), d, op);
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
  OpBuilder b;
  llvm::DenseMap<Value, Layout> layouts;
  llvm::DenseMap<Value, Value> materialized;
  llvm::DenseSet<Operation *> inserted;
};

} // namespace

LogicalResult mlir::dtc::partitionBatch(func::FuncOp func, int64_t shards,
                                        FlatSymbolRefAttr mesh, StringRef axis,
                                        StringRef purpose) {
  return Partitioner(func, shards, mesh, axis, purpose).run();
}

//===- SortExperts.cpp - each expert on its routed rows only --------------===//
//
// After dtc-batch-experts a mixture in Hugging Face's loop form computes
// every expert on every (token, choice) row, Y[E, R, ...], and then zeroes
// the rows the router did not choose for it, Y * M: dropless at the exact
// bound, every expert's buffer all R rows. With a bound B this pass sorts
// the rows by expert instead: in each routing group of contiguous rows the
// rows chosen for expert e fill e's buffer of B slots in order (a cumsum of
// the mask gives each its slot, a scatter of the row numbers gives each
// slot its row), the shared row inputs are gathered into [E, groups * B,
// ...], the expert computation runs on those buffers, and its rows are
// scattered back to their places (an empty slot's output times zero), so
// while no expert is chosen more than B times in a group the step is
// exactly the same function and its gradient; the pairs
// past B are counted (the step output expert_overflow) rather than silently
// dropped.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Passes.h"

#include "dtc/Analysis/Phases.h"
#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"
#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/DTCTraits.h"
#include "dtc/Dialect/DTC/IR/DeadOps.h"
#include "dtc/Runtime/StepSignature.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dtc {
#define GEN_PASS_DEF_SORTEXPERTS
#include "dtc/Transforms/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// `type` with its second (rows) dimension `rows`.
RankedTensorType withRows(RankedTensorType type, int64_t rows) {
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = rows;
  return type.clone(shape);
}

/// A 0/1 routing mask: booleans cast (and reshaped, and cast again by
/// mixed precision) to floats.
bool isRoutingMask(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<ReshapeOp, CastOp>(op))
      return false;
    value = op->getOperand(0);
    if (typeOf(value).getElementType().isInteger(1))
      return isa<CastOp>(op);
  }
  return false;
}

/// One mixture after dtc-batch-experts: `anchor` multiplies the experts'
/// outputs on every row, `experts` [E, R, ...], by the routing mask [E, R,
/// 1, ...].
struct Mixture {
  MulOp anchor;
  Value experts, mask;
  int64_t numExperts, rows;
  /// The multiplications of the outputs by a per-row scalar (the routing
  /// weights), innermost first: they stay on the rows, where the tokens
  /// are, and the buffers hold the outputs before them.
  SmallVector<MulOp> rowScales;
};

/// Peels the per-row scalings off `mixture.experts`.
void peelRowScales(Mixture &mixture, const DenseSet<Value> &dependent) {
  while (auto mul = mixture.experts.getDefiningOp<MulOp>()) {
    Value scale = mul.getRhs(), other = mul.getLhs();
    auto isRowScale = [&](Value v) {
      RankedTensorType type = typeOf(v);
      return dependent.contains(v) && type.getRank() >= 2 &&
             type.getDimSize(0) == 1 && type.getDimSize(1) == mixture.rows &&
             llvm::all_of(type.getShape().drop_front(2),
                          [](int64_t d) { return d == 1; });
    };
    if (!isRowScale(scale))
      std::swap(scale, other);
    if (!isRowScale(scale) || other.getType() != mul.getType() ||
        !mul->hasOneUse())
      return;
    mixture.rowScales.insert(mixture.rowScales.begin(), mul);
    mixture.experts = other;
  }
}

std::optional<Mixture> matchMixture(MulOp mul) {
  for (auto [experts, mask] : {std::pair(mul.getLhs(), mul.getRhs()),
                               std::pair(mul.getRhs(), mul.getLhs())}) {
    RankedTensorType y = typeOf(experts), m = typeOf(mask);
    if (y.getRank() < 2 || y.getRank() != m.getRank() || y.getDimSize(0) < 2 ||
        m.getShape().take_front(2) != y.getShape().take_front(2) ||
        llvm::any_of(m.getShape().drop_front(2),
                     [](int64_t d) { return d != 1; }) ||
        !isRoutingMask(mask) || !experts.getDefiningOp())
      continue;
    return Mixture{mul, experts, mask, y.getDimSize(0), y.getDimSize(1)};
  }
  return std::nullopt;
}

/// The expert computation of a mixture: the ops from its row inputs
/// ([1, R, ...]: the tokens, the routing weights, shared by every expert)
/// to its outputs, every one row-wise over the experts and rows dimensions.
struct ExpertComputation {
  SmallVector<Operation *> ops; // in block order
  SetVector<Value> rowInputs;
};

class ComputationFinder {
public:
  ComputationFinder(const Mixture &mixture, const DenseSet<Value> &dependent)
      : mixture(mixture), dependent(dependent) {}

  /// The computation, or the op that is not row-wise.
  FailureOr<ExpertComputation> find(Operation *&blame) {
    ExpertComputation computation;
    DenseSet<Operation *> seen;
    SmallVector<std::pair<Value, Operation *>> worklist = {
        {mixture.experts, mixture.anchor}};
    while (!worklist.empty()) {
      auto [value, user] = worklist.pop_back_val();
      if (!dependent.contains(value))
        continue; // a weight: the same for every row
      RankedTensorType type = typeOf(value);
      bool rowShaped =
          type.getRank() >= 2 && type.getDimSize(1) == mixture.rows;
      if (rowShaped && type.getDimSize(0) == 1) {
        computation.rowInputs.insert(value);
        continue;
      }
      Operation *op = value.getDefiningOp();
      if (!rowShaped || type.getDimSize(0) != mixture.numExperts || !op) {
        blame = user;
        return failure();
      }
      if (!seen.insert(op).second)
        continue;
      if (!isRowWise(op)) {
        blame = op;
        return failure();
      }
      computation.ops.push_back(op);
      for (Value operand : op->getOperands())
        worklist.push_back({operand, op});
    }
    llvm::sort(computation.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return computation;
  }

private:
  /// Whether each row of `op`'s result [E, R, ...] is computed from the
  /// same row of its operands alone.
  bool isRowWise(Operation *op) {
    if (op->getNumResults() != 1)
      return false;
    RankedTensorType result = typeOf(op->getResult(0));
    if (op->hasTrait<OpTrait::Elementwise>() ||
        op->hasTrait<OpTrait::dtc::BroadcastingElementwise>()) {
      // A weight must not vary along the rows.
      for (Value operand : op->getOperands()) {
        if (dependent.contains(operand))
          continue;
        RankedTensorType type = typeOf(operand);
        int64_t rowDim = type.getRank() - result.getRank() + 1;
        if (rowDim >= 0 && type.getDimSize(rowDim) != 1)
          return false;
      }
      return true;
    }
    if (auto matmul = dyn_cast<MatmulOp>(op))
      return typeOf(matmul.getLhs()).getRank() == 3 && result.getRank() == 3 &&
             !dependent.contains(matmul.getRhs());
    if (auto slice = dyn_cast<SliceOp>(op))
      return slice.getStarts()[0] == 0 && slice.getStarts()[1] == 0 &&
             slice.getStrides()[0] == 1 && slice.getStrides()[1] == 1 &&
             slice.getSizes()[1] == mixture.rows;
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return typeOf(reshape.getInput()).getShape().take_front(2) ==
             result.getShape().take_front(2);
    if (auto transpose = dyn_cast<TransposeOp>(op))
      return transpose.getPermutation()[0] == 0 &&
             transpose.getPermutation()[1] == 1;
    return false;
  }

  const Mixture &mixture;
  const DenseSet<Value> &dependent;
};

/// Builds the sorted form of one mixture before its anchor.
class Sorter {
public:
  Sorter(OpBuilder &b, Mixture mixture, int64_t groups, int64_t bound,
         bool zeroGathered)
      : b(b), e(b, mixture.anchor.getLoc()), loc(mixture.anchor.getLoc()),
        mixture(mixture), experts(mixture.numExperts), groups(groups),
        perGroup(mixture.rows / groups), bound(std::min(bound, perGroup)),
        zeroGathered(zeroGathered) {}

  /// Replaces the mixture's outputs by the sorted computation's.
  void sort(const ExpertComputation &computation) {
    b.setInsertionPoint(mixture.anchor);
    buildSlots();
    IRMapping mapping;
    for (Value input : computation.rowInputs)
      mapping.map(input, gather(input));
    for (Operation *op : computation.ops)
      mapping.map(op->getResult(0), sorted(op, mapping));
    Value out = scatterBack(mapping.lookup(mixture.experts));
    mixture.experts.replaceAllUsesWith(out);
    for (MulOp scale : mixture.rowScales)
      scale->moveBefore(mixture.anchor);
  }

  int64_t bufferRows() const { return experts * groups * bound; }

private:
  /// Each slot's row within its group and whether it holds one, and the
  /// count of rows past the bound per expert, [E], tagged for
  /// dtc-expert-load.
  void buildSlots() {
    Type f32 = b.getF32Type(), i64 = b.getI64Type();
    auto f32Type = [&](ArrayRef<int64_t> shape) {
      return RankedTensorType::get(shape, f32);
    };
    Value mask = e.castTo(mixture.mask, f32);
    mask = e.reshape(mask, {experts, groups, perGroup});
    // A chosen row's place among its expert's rows of the group, from 1.
    Value place = CumSumOp::create(b, loc, mask, /*dim=*/2);
    Value boundValue = e.scalar(static_cast<double>(bound), place);
    Value fits = CastOp::create(
        b, loc, f32Type({experts, groups, perGroup}),
        CompareOp::create(b, loc, ComparisonPredicate::LE, place, boundValue));
    Value kept = e.mul(mask, fits);
    // Kept rows go to slot place - 1, the others to the spare slot B.
    Value target = e.add(
        boundValue, e.mul(kept, e.sub(place, e.scalar(1.0 + bound, place))));
    Value targetIndex = CastOp::create(
        b, loc, RankedTensorType::get({experts, groups, perGroup}, i64),
        target);
    Value rowNumbers = CastOp::create(
        b, loc, f32Type({1, 1, perGroup}),
        IotaOp::create(b, loc, RankedTensorType::get({1, 1, perGroup}, i64),
                       b.getI64IntegerAttr(2)));
    Value rowsPlusOne =
        BroadcastOp::create(b, loc, f32Type({experts, groups, perGroup}),
                            e.add(rowNumbers, e.scalar(1.0, rowNumbers)));
    Value slots = ScatterElementsAddOp::create(
        b, loc, e.zeros(f32Type({experts, groups, bound + 1})), targetIndex,
        rowsPlusOne, b.getI64IntegerAttr(2));
    slots = SliceOp::create(b, loc, f32Type({experts, groups, bound}), slots,
                            ArrayRef<int64_t>{0, 0, 0},
                            ArrayRef<int64_t>{experts, groups, bound},
                            ArrayRef<int64_t>{1, 1, 1});
    Value zero = e.scalar(0.0, slots);
    filled = CastOp::create(
        b, loc, f32Type({experts, groups, bound}),
        CompareOp::create(b, loc, ComparisonPredicate::GT, slots, zero));
    rows = CastOp::create(b, loc,
                          RankedTensorType::get({experts, groups, bound}, i64),
                          e.max(e.sub(slots, e.scalar(1.0, slots)), zero));
    Value counts = e.reduceSum(mask, {2}, /*keepDims=*/false);
    Value past =
        e.max(e.sub(counts, e.scalar(bound, counts)), e.scalar(0.0, counts));
    Value overflow = e.reduceSum(past, {1}, /*keepDims=*/false);
    overflow.getDefiningOp()->setAttr(kExpertOverflowAttrName, b.getUnitAttr());
  }

  /// `buffers` [E, groups * B, ...] with their empty slots zeroed: the
  /// outputs before the scatter back (whose gradients are then zero there,
  /// and so, row-wise, is every gradient of a buffer) and, when the buffers
  /// are exchanged (`zeroGathered`), the gathered tokens, so that every
  /// exchange sends the filled rows only (dtc-send-filled-rows; experts
  /// without biases, Mixtral's, compute zeros there too).
  Value emptySlotsZeroed(Value buffers) {
    RankedTensorType type = typeOf(buffers);
    SmallVector<int64_t> filledShape(type.getRank(), 1);
    filledShape[0] = experts;
    filledShape[1] = groups * bound;
    return e.mul(buffers, e.reshape(e.castTo(filled, type.getElementType()),
                                    filledShape));
  }

  /// The row input [1, R, ...] gathered into the buffers [E, groups * B,
  /// ...]: a gather along each group's rows (an empty slot's of row 0, or
  /// zero).
  Value gather(Value input) {
    RankedTensorType type = typeOf(input);
    int64_t features = type.getNumElements() / mixture.rows;
    Value grouped = e.reshape(input, {groups, perGroup, features});
    Value index =
        e.reshape(TransposeOp::create(b, loc, rows, ArrayRef<int64_t>{1, 0, 2}),
                  {groups, experts * bound, 1});
    auto indexType = typeOf(index).clone({groups, experts * bound, features});
    index = BroadcastOp::create(b, loc, indexType, index);
    Value gathered =
        GatherElementsOp::create(b, loc, indexType.clone(type.getElementType()),
                                 grouped, index, b.getI64IntegerAttr(1));
    gathered = e.reshape(gathered, {groups, experts, bound, features});
    gathered =
        TransposeOp::create(b, loc, gathered, ArrayRef<int64_t>{1, 0, 2, 3});
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = experts;
    shape[1] = groups * bound;
    gathered = e.reshape(gathered, shape);
    return zeroGathered ? emptySlotsZeroed(gathered) : gathered;
  }

  /// `op` on the buffers' rows.
  Value sorted(Operation *op, IRMapping &mapping) {
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(mapping.lookupOrDefault(operand));
    RankedTensorType type = withRows(typeOf(op->getResult(0)), groups * bound);
    Operation *created;
    if (auto slice = dyn_cast<SliceOp>(op)) {
      SmallVector<int64_t> sizes(slice.getSizes());
      sizes[1] = groups * bound;
      created = SliceOp::create(b, op->getLoc(), type, operands[0],
                                slice.getStarts(), sizes, slice.getStrides());
    } else if (isa<ReshapeOp>(op)) {
      created = ReshapeOp::create(b, op->getLoc(), type, operands[0]);
    } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
      created = TransposeOp::create(b, op->getLoc(), type, operands[0],
                                    transpose.getPermutationAttr());
    } else {
      OperationState state(op->getLoc(), op->getName(), operands,
                           TypeRange{type}, op->getAttrs());
      return b.create(state)->getResult(0);
    }
    created->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    return created->getResult(0);
  }

  /// The buffers' outputs [E, groups * B, ...] back on their rows [E, R,
  /// ...]: an empty slot's (row 0's place) multiplied by zero.
  Value scatterBack(Value outputs) {
    RankedTensorType original = typeOf(mixture.experts);
    int64_t features = original.getNumElements() / (experts * mixture.rows);
    Type elementType = original.getElementType();
    outputs = e.reshape(emptySlotsZeroed(outputs),
                        {experts, groups, bound, features});
    auto indexType = RankedTensorType::get({experts, groups, bound, features},
                                           b.getI64Type());
    Value index = BroadcastOp::create(
        b, loc, indexType, e.reshape(rows, {experts, groups, bound, 1}));
    auto outType = RankedTensorType::get({experts, groups, perGroup, features},
                                         elementType);
    Value out = ScatterElementsAddOp::create(b, loc, e.zeros(outType), index,
                                             outputs, b.getI64IntegerAttr(2));
    return e.reshape(out, original.getShape());
  }

  OpBuilder &b;
  OpEmitter e;
  Location loc;
  Mixture mixture;
  int64_t experts, groups, perGroup, bound;
  bool zeroGathered;
  /// [E, groups, B]: whether each slot holds a row, and which row of its
  /// group (0 where empty).
  Value filled, rows;
};

struct SortExpertsPass : public dtc::impl::SortExpertsBase<SortExpertsPass> {
  using SortExpertsBase::SortExpertsBase;

  void runOnOperation() override {
    if (bound <= 0)
      return;
    func::FuncOp func = getOperation();
    SmallVector<Mixture> mixtures;
    func.walk([&](MulOp mul) {
      if (std::optional<Mixture> mixture = matchMixture(mul))
        mixtures.push_back(*mixture);
    });
    if (mixtures.empty()) {
      func.emitError("--expert-bound needs a mixture of experts in the loop "
                     "form (each expert's output multiplied by its routing "
                     "mask after dtc-batch-experts); the step has none");
      return signalPassFailure();
    }
    DenseSet<Value> dependent = getBatchDependentValues(func);
    OpBuilder b(&getContext());
    int64_t paddedBytes = 0, usefulBytes = 0, bufferRows = 0, routedRows = 0;
    for (Mixture &mixture : mixtures) {
      if (mixture.rows % groups != 0) {
        mixture.anchor.emitError("the mixture's ")
            << mixture.rows << " (token, choice) rows do not cut into "
            << groups << " routing groups (dp x ep x microbatches)";
        return signalPassFailure();
      }
      peelRowScales(mixture, dependent);
      Operation *blame = nullptr;
      FailureOr<ExpertComputation> computation =
          ComputationFinder(mixture, dependent).find(blame);
      if (failed(computation)) {
        blame->emitError("--expert-bound: cannot sort the mixture's rows by "
                         "expert: '")
            << blame->getName()
            << "' does not compute each (token, choice) row from that row "
               "alone";
        return signalPassFailure();
      }
      Sorter sorter(b, mixture, groups, bound, zeroEmptySlots);
      sorter.sort(*computation);
      for (Value input : computation->rowInputs) {
        RankedTensorType type = typeOf(input);
        int64_t rowBytes = type.getNumElements() / mixture.rows *
                           type.getElementTypeBitWidth() / 8;
        paddedBytes += sorter.bufferRows() * rowBytes;
        usefulBytes += mixture.rows * rowBytes;
      }
      bufferRows += sorter.bufferRows();
      routedRows += mixture.rows;
      ++numSorted;
    }
    func->setAttr(
        kExpertBuffersAttrName,
        b.getDictionaryAttr(
            {b.getNamedAttr("mixtures", b.getI64IntegerAttr(mixtures.size())),
             b.getNamedAttr("buffer_rows", b.getI64IntegerAttr(bufferRows)),
             b.getNamedAttr("routed_rows", b.getI64IntegerAttr(routedRows)),
             b.getNamedAttr("padded_bytes", b.getI64IntegerAttr(paddedBytes)),
             b.getNamedAttr("useful_bytes",
                            b.getI64IntegerAttr(usefulBytes))}));
    // The unsorted computation is dead now.
    eraseDeadOps(func.getBody().front(), [](Operation *op) {
      return op->hasAttr(kExpertOverflowAttrName);
    });
  }
};

} // namespace

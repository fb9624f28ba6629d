//===- BatchExperts.cpp - a mixture of experts as one batched computation -===//
//
// Exporters unroll a mixture of experts' loop over the experts: E copies of
// the expert's computation, each reading its expert's slice of the stacked
// weights (a gather of index e along dimension 0) and its routing mask,
// their outputs summed. This pass finds such a sum whose terms are the same
// computation and rewrites it as one computation over a leading experts
// dimension, summed over it: the stacked weights read whole, values the
// experts share read once (numpy broadcasting carries them), so the expert
// matmuls are one batched matmul and expert parallelism can split the
// experts dimension. A sum whose terms differ anywhere but in the expert
// index stays as it is.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Dialect/DTC/IR/DTCTraits.h"
#include "dtc/Dialect/DTC/IR/DeadOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>

namespace mlir::dtc {
#define GEN_PASS_DEF_BATCHEXPERTS
#include "dtc/Transforms/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A tuple of values, one per expert, as one value: `stacked` has a
/// leading experts dimension; otherwise every expert's value is `value`.
struct Batched {
  Value value;
  bool stacked;
};

class ExpertBatcher {
public:
  ExpertBatcher(OpBuilder &builder, int64_t experts)
      : b(builder), experts(experts) {}

  /// The tuple `values` as one value, or failure (nothing created that is
  /// used: dead ops are erased afterwards).
  FailureOr<Batched> batch(ArrayRef<Value> values) {
    std::vector<void *> id;
    for (Value value : values)
      id.push_back(value.getAsOpaquePointer());
    if (auto it = memo.find(id); it != memo.end())
      return it->second;
    FailureOr<Batched> result = batchUncached(values);
    if (succeeded(result))
      memo[id] = *result;
    return result;
  }

private:
  FailureOr<Batched> batchUncached(ArrayRef<Value> values) {
    if (llvm::all_equal(values))
      return Batched{values[0], false};
    if (std::optional<Value> stack = expertSlices(values))
      return Batched{*stack, true};
    auto result = dyn_cast<OpResult>(values[0]);
    if (!result)
      return failure();
    Operation *first = result.getOwner();
    for (Value value : values) {
      auto other = dyn_cast<OpResult>(value);
      if (!other || other.getResultNumber() != result.getResultNumber() ||
          !sameComputation(first, other.getOwner()))
        return failure();
    }
    SmallVector<Batched> operands;
    bool anyStacked = false;
    for (unsigned i = 0, e = first->getNumOperands(); i < e; ++i) {
      SmallVector<Value> column;
      for (Value value : values)
        column.push_back(cast<OpResult>(value).getOwner()->getOperand(i));
      FailureOr<Batched> operand = batch(column);
      if (failed(operand))
        return failure();
      anyStacked |= operand->stacked;
      operands.push_back(*operand);
    }
    // Equal ops on equal operands: every expert has the same value.
    if (!anyStacked)
      return Batched{values[0], false};
    FailureOr<Operation *> op = batchedOp(first, operands);
    if (failed(op))
      return failure();
    return Batched{(*op)->getResult(result.getResultNumber()), true};
  }

  /// values[e] = gather(%stack[e]) along dimension 0, for e = 0..E-1, of
  /// one stack of E: the stack itself.
  std::optional<Value> expertSlices(ArrayRef<Value> values) {
    Value stack;
    for (auto [e, value] : llvm::enumerate(values)) {
      auto gather = value.getDefiningOp<GatherOp>();
      APInt index;
      if (!gather || gather.getDim() != 0 ||
          gather.getIndices().getType().getRank() != 0 ||
          !matchPattern(gather.getIndices(), m_ConstantInt(&index)) ||
          index.getSExtValue() != static_cast<int64_t>(e))
        return std::nullopt;
      if (stack && gather.getInput() != stack)
        return std::nullopt;
      stack = gather.getInput();
    }
    if (cast<RankedTensorType>(stack.getType()).getDimSize(0) != experts)
      return std::nullopt;
    return stack;
  }

  /// Whether `a` and `b` compute alike from their operands.
  static bool sameComputation(Operation *a, Operation *b) {
    return a->getName() == b->getName() &&
           a->getNumOperands() == b->getNumOperands() &&
           a->getNumRegions() == 0 && b->getNumRegions() == 0 &&
           a->getRawDictionaryAttrs() == b->getRawDictionaryAttrs() &&
           a->getPropertiesAsAttribute() == b->getPropertiesAsAttribute() &&
           a->getResultTypes() == b->getResultTypes() && isMemoryEffectFree(a);
  }

  /// `op` over the experts dimension: its stacked operands have it first;
  /// the others are every expert's.
  FailureOr<Operation *> batchedOp(Operation *op, ArrayRef<Batched> operands) {
    b.setInsertionPoint(op);
    SmallVector<Value> values;
    for (const Batched &operand : operands)
      values.push_back(operand.value);
    auto prefixed = [](ArrayRef<int64_t> dims, int64_t prefix) {
      SmallVector<int64_t> result{prefix};
      llvm::append_range(result, dims);
      return result;
    };
    Location loc = op->getLoc();
    auto original = cast<RankedTensorType>(op->getResult(0).getType());
    RankedTensorType resultType =
        original.clone(prefixed(original.getShape(), experts));
    // Broadcasting (elementwise ops, and the matmul's batch dimensions)
    // aligns shapes from the right, so the experts dimension goes where the
    // operand of the highest rank has its first: a stacked operand of a
    // lower rank gets 1s after it, a shared operand of that rank a leading 1.
    auto aligned = [&](unsigned i, int64_t rank) -> Value {
      auto type = cast<RankedTensorType>(op->getOperand(i).getType());
      SmallVector<int64_t> shape(type.getShape());
      if (!operands[i].stacked && type.getRank() < rank)
        return values[i];
      shape.insert(shape.begin(), rank - type.getRank(), 1);
      shape.insert(shape.begin(), operands[i].stacked ? experts : 1);
      if (shape == cast<RankedTensorType>(values[i].getType()).getShape())
        return values[i];
      return ReshapeOp::create(b, loc, type.clone(shape), values[i]);
    };
    bool matmul = isa<MatmulOp>(op);
    if (op->hasTrait<OpTrait::Elementwise>() ||
        op->hasTrait<OpTrait::dtc::BroadcastingElementwise>() || matmul) {
      int64_t rank = 0;
      for (Value value : op->getOperands()) {
        int64_t operandRank = cast<RankedTensorType>(value.getType()).getRank();
        if (matmul && operandRank < 2)
          return failure();
        rank = std::max(rank, operandRank);
      }
      SmallVector<Value> alignedOperands;
      for (unsigned i = 0; i < values.size(); ++i)
        alignedOperands.push_back(aligned(i, rank));
      OperationState state(loc, op->getName(), alignedOperands,
                           TypeRange{resultType}, op->getAttrs());
      return b.create(state);
    }
    if (llvm::any_of(operands.drop_front(),
                     [](const Batched &operand) { return operand.stacked; }))
      return failure();
    Value input = values[0];
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return ReshapeOp::create(b, loc, resultType, input).getOperation();
    if (auto broadcast = dyn_cast<BroadcastOp>(op))
      return BroadcastOp::create(b, loc, resultType, input).getOperation();
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      SmallVector<int64_t> permutation{0};
      for (int64_t d : transpose.getPermutation())
        permutation.push_back(d + 1);
      return TransposeOp::create(b, loc, input, permutation).getOperation();
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      return SliceOp::create(b, loc, resultType, input,
                             prefixed(slice.getStarts(), 0),
                             prefixed(slice.getSizes(), experts),
                             prefixed(slice.getStrides(), 1))
          .getOperation();
    if (auto sum = dyn_cast<ReduceSumOp>(op)) {
      SmallVector<int64_t> dims;
      for (int64_t d : sum.getDims())
        dims.push_back(d + 1);
      return ReduceSumOp::create(b, loc, input, dims, sum.getKeepDims())
          .getOperation();
    }
    return failure();
  }

  OpBuilder &b;
  int64_t experts;
  std::map<std::vector<void *>, Batched> memo;
};

/// The terms of the sum `root` (a chain of adds of one type, each but the
/// root read only by the next), but zeros.
SmallVector<Value> sumTerms(AddOp root) {
  SmallVector<Value> terms;
  Type type = root.getType();
  std::function<void(Value)> visit = [&](Value value) {
    auto add = value.getDefiningOp<AddOp>();
    if (add && value.getType() == type && (add == root || value.hasOneUse()) &&
        add.getLhs().getType() == type && add.getRhs().getType() == type) {
      visit(add.getLhs());
      visit(add.getRhs());
      return;
    }
    // A sum's starting value, zeros, is no term.
    if (!matchPattern(value, m_AnyZeroFloat()) &&
        !matchPattern(value, m_Zero()))
      terms.push_back(value);
  };
  visit(root.getResult());
  return terms;
}

struct BatchExpertsPass : public dtc::impl::BatchExpertsBase<BatchExpertsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The roots: sums not themselves a term of a larger one.
    SmallVector<AddOp> roots;
    func.walk([&](AddOp add) {
      bool inner =
          add->hasOneUse() && isa<AddOp>(*add->getUsers().begin()) &&
          add->getUsers().begin()->getResult(0).getType() == add.getType();
      if (!inner)
        roots.push_back(add);
    });
    OpBuilder b(&getContext());
    for (AddOp root : roots) {
      SmallVector<Value> terms = sumTerms(root);
      if (terms.size() < 2)
        continue;
      ExpertBatcher batcher(b, terms.size());
      FailureOr<Batched> batched = batcher.batch(terms);
      if (failed(batched) || !batched->stacked)
        continue;
      b.setInsertionPoint(root);
      Value sum = ReduceSumOp::create(b, root.getLoc(), batched->value,
                                      ArrayRef<int64_t>{0}, false);
      root.getResult().replaceAllUsesWith(sum);
      ++numBatched;
    }
    // What the batched form replaced, and what a failed attempt left.
    eraseDeadOps(func.getBody().front());
  }
};

} // namespace

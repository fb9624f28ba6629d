//===- RaiseAttention.cpp - one dtc.attention per attention --------------===//
//
// Exporters write attention as its parts: q k^T (a matmul with a transposed
// or transposing rhs), a scale (a multiplication or division by a scalar),
// a mask (an added float mask, or a select that puts a constant where a
// boolean mask is false), a softmax over the keys, an optional dropout, and
// the product with v; grouped-query attention first repeats each key/value
// head (reshape to [b, kv, 1, s, d], broadcast, reshape to [b, h, s, d]).
// This pass finds that chain in the forward and replaces it with one
// dtc.attention, so that what keys on attention -- fused kernels,
// recomputation, context parallelism -- finds it in one place.
//
//===----------------------------------------------------------------------===//

#include "dtc/Transforms/Passes.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Interpreter/Interpreter.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

namespace mlir::dtc {
#define GEN_PASS_DEF_RAISEATTENTION
#include "dtc/Transforms/Passes.h.inc"
} // namespace mlir::dtc

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The value of a scalar computed from constants alone (a scale written as
/// sqrt(d) or d^0.5), evaluated with the reference kernels.
std::optional<double> scalarConstant(Value value, unsigned depth = 0) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Operation *def = value.getDefiningOp();
  if (!type || type.getNumElements() != 1 || !def || depth > 8 ||
      !isa<DTCDialect>(def->getDialect()) || def->getNumResults() != 1)
    return std::nullopt;
  if (auto constant = dyn_cast<ConstantOp>(def)) {
    auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!elements || !isa<FloatType>(elements.getElementType()))
      return std::nullopt;
    return (*elements.getValues<APFloat>().begin()).convertToDouble();
  }
  SmallVector<Tensor> operands;
  for (Value operand : def->getOperands()) {
    std::optional<double> scalar = scalarConstant(operand, depth + 1);
    if (!scalar)
      return std::nullopt;
    Tensor tensor(DType::F64,
                  Shape(cast<RankedTensorType>(operand.getType()).getShape()));
    tensor.floats()[0] = *scalar;
    operands.push_back(std::move(tensor));
  }
  SmallVector<const Tensor *> pointers;
  for (const Tensor &operand : operands)
    pointers.push_back(&operand);
  SmallVector<Tensor> results;
  if (failed(evaluateOp(def, pointers, results)) || !results[0].isFloat())
    return std::nullopt;
  return results[0].floats()[0];
}

/// `x` [b, kv, s, d] if `expanded` repeats its heads for groups of
/// query heads (reshape to [b, kv, 1, s, d], broadcast the 1, reshape to
/// [b, kv * group, s, d]), with the group size.
std::optional<std::pair<Value, int64_t>> unrepeatedHeads(Value expanded) {
  auto merge = expanded.getDefiningOp<ReshapeOp>();
  auto broadcast =
      merge ? merge.getInput().getDefiningOp<BroadcastOp>() : BroadcastOp();
  auto insert = broadcast ? broadcast.getInput().getDefiningOp<ReshapeOp>()
                          : ReshapeOp();
  if (!insert)
    return std::nullopt;
  ArrayRef<int64_t> base = insert.getInput().getType().getShape();
  ArrayRef<int64_t> one = insert.getType().getShape();
  ArrayRef<int64_t> many = broadcast.getType().getShape();
  if (base.size() != 4 || one.size() != 5 || many.size() != 5 ||
      one != ArrayRef<int64_t>{base[0], base[1], 1, base[2], base[3]} ||
      many[0] != one[0] || many[1] != one[1] || many.drop_front(3) !=
                                                    one.drop_front(3))
    return std::nullopt;
  return std::make_pair(insert.getInput(), many[2]);
}

struct RaiseAttentionPass
    : public dtc::impl::RaiseAttentionBase<RaiseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp op) { softmaxes.push_back(op); });
    for (SoftmaxOp softmax : softmaxes)
      if (raise(softmax))
        ++numRaised;
  }

  /// Whether `value` is read by one op only: the next link of the chain
  /// (a link read elsewhere -- attention weights returned -- stays).
  static bool usedOnce(Value value) { return value.hasOneUse(); }

  bool raise(SoftmaxOp softmax) {
    auto type = softmax.getType();
    if (type.getRank() != 4 || softmax.getDim() != 3 ||
        !usedOnce(softmax.getResult()))
      return false;
    // After the softmax: an optional dropout, then the product with v.
    Operation *next = *softmax->user_begin();
    auto dropout = dyn_cast<DropoutOp>(next);
    if (dropout) {
      if (dropout.getOffset() || !usedOnce(dropout.getResult()))
        return false;
      next = *dropout->user_begin();
    }
    auto values = dyn_cast<MatmulOp>(next);
    Value probs = dropout ? dropout.getResult() : softmax.getResult();
    if (!values || values.getLhs() != probs || values.getTransposeLhs() ||
        values.getTransposeRhs() || values.getRhs().getType().getRank() != 4)
      return false;

    // Before it: the mask, the scale, q k^T.
    Value chain = softmax.getInput();
    Value mask;
    bool invertedMask = false;
    std::optional<double> maskedValue;
    if (auto add = chain.getDefiningOp<AddOp>(); add && usedOnce(chain)) {
      // The scores are the operand that comes from a matmul (through the
      // scale); the other is the mask.
      bool lhsScores = fromProduct(add.getLhs());
      chain = lhsScores ? add.getLhs() : add.getRhs();
      mask = lhsScores ? add.getRhs() : add.getLhs();
    } else if (auto select = chain.getDefiningOp<SelectOp>();
               select && usedOnce(chain)) {
      // The constant where the mask is false, or (masked_fill(~mask, c):
      // the mask inverted) where it is true.
      maskedValue = scalarConstant(select.getOnFalse());
      mask = select.getCond();
      chain = select.getOnTrue();
      if (!maskedValue) {
        maskedValue = scalarConstant(select.getOnTrue());
        if (!maskedValue)
          return false;
        invertedMask = true;
        chain = select.getOnFalse();
      }
    }
    double scale = 1;
    if (Operation *def = chain.getDefiningOp();
        def && isa<MulOp, DivOp>(def) && usedOnce(chain)) {
      Value lhs = def->getOperand(0), rhs = def->getOperand(1);
      std::optional<double> factor = scalarConstant(rhs);
      if (!factor && isa<MulOp>(def)) {
        std::swap(lhs, rhs);
        factor = scalarConstant(rhs);
      }
      if (!factor)
        return false;
      scale = isa<DivOp>(def) ? 1.0 / *factor : *factor;
      chain = lhs;
    }
    auto scores = chain.getDefiningOp<MatmulOp>();
    if (!scores || !usedOnce(chain) || scores.getTransposeLhs() ||
        scores.getLhs().getType().getRank() != 4 ||
        scores.getRhs().getType().getRank() != 4 ||
        chain.getType() != softmax.getType())
      return false;
    Value q = scores.getLhs(), k = scores.getRhs();
    // k^T: what a transpose of its last two dimensions (or transpose_rhs)
    // reads is k.
    bool transposeK = false;
    if (!scores.getTransposeRhs()) {
      auto transpose = k.getDefiningOp<TransposeOp>();
      if (transpose &&
          transpose.getPermutation() == ArrayRef<int64_t>{0, 1, 3, 2})
        k = transpose.getInput();
      else
        transposeK = true;
    }
    Value v = values.getRhs();
    // Grouped-query attention: k and v read unrepeated.
    if (!transposeK) {
      auto kHeads = unrepeatedHeads(k), vHeads = unrepeatedHeads(v);
      if (kHeads && vHeads && kHeads->second == vHeads->second) {
        k = kHeads->first;
        v = vHeads->first;
      }
    }
    auto element = [](Value x) {
      return cast<RankedTensorType>(x.getType()).getElementType();
    };
    if (element(q) != element(k) || element(q) != element(v))
      return false;

    OpBuilder b(values);
    Location loc = softmax.getLoc();
    if (transposeK)
      k = TransposeOp::create(b, loc, k, ArrayRef<int64_t>{0, 1, 3, 2});
    if (invertedMask) {
      auto inverse = mask.getDefiningOp<NotOp>();
      mask = inverse ? inverse.getInput() : NotOp::create(b, loc, mask);
    }
    auto attention = AttentionOp::create(
        b, loc, q, k, v, mask, dropout ? dropout.getStep() : Value(), Value(),
        b.getF64FloatAttr(scale),
        maskedValue ? b.getF64FloatAttr(*maskedValue) : FloatAttr(),
        dropout ? dropout.getRatioAttr() : FloatAttr(),
        dropout ? dropout.getSeedAttr() : IntegerAttr(),
        dropout ? dropout.getStreamAttr() : IntegerAttr(),
        DenseI64ArrayAttr(), /*softcap=*/FloatAttr());
    // Shapes the matcher does not check (a mask that does not broadcast
    // to the scores) leave the chain as it is.
    bool valid;
    {
      ScopedDiagnosticHandler quiet(&getContext(),
                                    [](Diagnostic &) { return success(); });
      valid = succeeded(verify(attention));
    }
    if (!valid) {
      attention.erase();
      return false;
    }
    values.getResult().replaceAllUsesWith(attention.getResult());
    // The chain, now unread, from its end back to q k^T's operands.
    SmallVector<Operation *> dead{values};
    llvm::DenseSet<Operation *> erased;
    while (!dead.empty()) {
      Operation *op = dead.pop_back_val();
      if (erased.contains(op) || !op->use_empty() || op == attention ||
          !isa<DTCDialect>(op->getDialect()) || !isPure(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          dead.push_back(def);
      erased.insert(op);
      op->erase();
    }
    return true;
  }

  /// Whether `x` is (a scaling of) a matmul's result.
  static bool fromProduct(Value x) {
    Operation *def = x.getDefiningOp();
    if (def && isa<MulOp, DivOp>(def))
      def = def->getOperand(0).getDefiningOp();
    return isa_and_nonnull<MatmulOp>(def);
  }
};

} // namespace

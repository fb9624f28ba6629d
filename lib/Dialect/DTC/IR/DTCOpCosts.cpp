//===- DTCOpCosts.cpp - FLOPs and bytes of dtc ops ------------------------===//
//
// CostOpInterface for every dtc op, attached as external models when the
// dialect loads. An op with a cost of its own has a `costOf` overload here;
// every other op gets the cost its traits imply (one arithmetic FLOP per
// result element for `Elementwise` and `BroadcastingElementwise` ops, bytes
// alone otherwise), so a new op needs code here only when its cost is
// something else. The conventions are in OpCost.h and docs/CostModel.md.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOps.h"

using namespace mlir;
using namespace mlir::dtc;

static int64_t numElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? type.getNumElements() : 0;
}

static int64_t bytesOf(Value value) {
  return isa<RankedTensorType>(value.getType())
             ? tensorByteSize(value.getType())
             : 0;
}

OpCost mlir::dtc::dataMovementCost(Operation *op) {
  OpCost cost;
  for (Value operand : op->getOperands())
    cost.bytesRead += bytesOf(operand);
  for (Value result : op->getResults())
    cost.bytesWritten += bytesOf(result);
  return cost;
}

OpCost mlir::dtc::elementwiseCost(Operation *op, double arithmetic,
                                  double transcendental) {
  OpCost cost = dataMovementCost(op);
  double elements = op->getNumResults() ? numElements(op->getResult(0)) : 0;
  cost.elementwiseFlops = arithmetic * elements;
  cost.transcendentalFlops = transcendental * elements;
  return cost;
}

/// The cost an op's traits imply.
static OpCost traitCost(Operation *op) {
  return isElementwise(op) ? elementwiseCost(op) : dataMovementCost(op);
}

OpCost mlir::dtc::getOpCost(Operation *op) {
  if (auto costed = dyn_cast<CostOpInterface>(op))
    return costed.getCost();
  return traitCost(op);
}

namespace {

/// Reads only the elements it returns (and its indices): a slice, a gather.
OpCost selectionCost(Operation *op, Value indices = Value()) {
  OpCost cost = dataMovementCost(op);
  cost.bytesRead = cost.bytesWritten + (indices ? bytesOf(indices) : 0);
  return cost;
}

/// `rows` lines of `n` elements each along `dim` of `value`.
struct Lines {
  double rows, n;
};
Lines linesAlong(Value value, int64_t dim) {
  auto type = cast<RankedTensorType>(value.getType());
  double n = type.getDimSize(dim);
  return {n ? type.getNumElements() / n : 0, n};
}

/// Lines of the dimensions `[dim, rank)`, which the norms normalize over.
Lines trailingLines(Value value, int64_t dim) {
  auto type = cast<RankedTensorType>(value.getType());
  double n = 1;
  for (int64_t d = dim; d < type.getRank(); ++d)
    n *= type.getDimSize(d);
  return {n ? type.getNumElements() / n : 0, n};
}

//===----------------------------------------------------------------------===//
// Ops whose cost is not what their traits imply
//===----------------------------------------------------------------------===//

OpCost costOf(ConstantOp) { return OpCost(); }

// One transcendental function per element.
OpCost costOf(ExpOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(LogOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(SqrtOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(RsqrtOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(TanhOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(ErfOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(SinOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(CosOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(SigmoidOp op) { return elementwiseCost(op, 0, 1); }
OpCost costOf(PowOp op) { return elementwiseCost(op, 0, 1); }
// x * sigmoid(x).
OpCost costOf(SiluOp op) { return elementwiseCost(op, 1, 1); }
// ln(1 + e^x): exp, add, log.
OpCost costOf(SoftplusOp op) { return elementwiseCost(op, 1, 2); }

OpCost costOf(GeluOp op) {
  // none: x * (1 + erf(x * (1/sqrt 2))) * 0.5: 4 arithmetic, erf.
  // tanh: x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x * x * x))) * 0.5:
  // 8 arithmetic, tanh.
  return op.getApproximate() == GeluApproximation::None
             ? elementwiseCost(op, 4, 1)
             : elementwiseCost(op, 8, 1);
}

// The kept test and the scaling (a select of x / (1 - ratio)); the
// generator's integer arithmetic is not counted.
OpCost costOf(DropoutOp op) { return elementwiseCost(op, 2, 0); }

OpCost costOf(MatmulOp op) {
  // 2*m*n*k per batch element: the result has batch*m*n elements.
  OpCost cost = dataMovementCost(op);
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  int64_t k = lhs.getDimSize(lhs.getRank() - (op.getTransposeLhs() ? 2 : 1));
  cost.matmulFlops = 2.0 * numElements(op.getResult()) * k;
  return cost;
}

/// n - 1 operations per output reducing n inputs.
OpCost reductionCost(Operation *op) {
  OpCost cost = dataMovementCost(op);
  cost.elementwiseFlops = static_cast<double>(numElements(op->getOperand(0))) -
                          numElements(op->getResult(0));
  return cost;
}
OpCost costOf(ReduceSumOp op) { return reductionCost(op); }
OpCost costOf(ReduceMaxOp op) { return reductionCost(op); }
OpCost costOf(ReduceMinOp op) { return reductionCost(op); }
OpCost costOf(ArgMaxOp op) { return reductionCost(op); }
// The sum's n - 1 additions and one division per output.
OpCost costOf(ReduceMeanOp op) {
  OpCost cost = reductionCost(op);
  cost.elementwiseFlops += numElements(op.getResult());
  return cost;
}

// n - 1 additions per line.
OpCost costOf(CumSumOp op) {
  OpCost cost = dataMovementCost(op);
  Lines lines = linesAlong(op.getInput(), op.getDim());
  cost.elementwiseFlops = lines.rows * (lines.n - 1);
  return cost;
}

// k passes of n - 1 comparisons per line.
OpCost costOf(TopKOp op) {
  OpCost cost = dataMovementCost(op);
  Lines lines = linesAlong(op.getInput(), op.getDim());
  cost.elementwiseFlops = lines.rows * op.getK() * (lines.n - 1);
  return cost;
}

OpCost costOf(SoftmaxOp op) {
  // Per line of n: max (n - 1), subtract (n), exp (n), sum (n - 1),
  // divide (n).
  OpCost cost = dataMovementCost(op);
  Lines lines = linesAlong(op.getInput(), op.getDim());
  cost.elementwiseFlops = lines.rows * (4 * lines.n - 2);
  cost.transcendentalFlops = lines.rows * lines.n;
  return cost;
}

OpCost costOf(AttentionOp op) {
  // The two products (2 q k^T, 2 p v per score), and per score: the scale,
  // the mask, the softmax's (4 n - 2) / n and exp, the dropout's 2, the
  // softcap's division, product and tanh.
  OpCost cost = dataMovementCost(op);
  auto q = op.getQ().getType(), k = op.getK().getType(),
       v = op.getV().getType();
  double scores = static_cast<double>(q.getDimSize(0)) * q.getDimSize(1) *
                  q.getDimSize(2) * k.getDimSize(2);
  double rows = scores / k.getDimSize(2);
  cost.matmulFlops = 2 * scores * (q.getDimSize(3) + v.getDimSize(3));
  cost.elementwiseFlops = scores * (1 + (op.getMask() ? 1 : 0) +
                                    (op.getDropoutRatio() ? 2 : 0) +
                                    (op.getSoftcap() ? 2 : 0)) +
                          rows * (4 * k.getDimSize(2) - 2);
  // exp, and the softcap's tanh.
  cost.transcendentalFlops = scores * (op.getSoftcap() ? 2 : 1);
  return cost;
}

OpCost costOf(AttentionGradOp op) {
  // Four products (2 per score each: dP = dO v^T, dV = P'^T dO, dQ = dS k,
  // dK = dS^T q), the softcap's fifth (q k^T again); per score: dP P, the
  // row sum, the subtraction and product of dS, the scale, the mask's
  // select, the dropout's 2 x 2, the softcap's 4 and tanh.
  OpCost cost = dataMovementCost(op);
  auto q = op.getQ().getType(), k = op.getK().getType(),
       v = op.getV().getType();
  double scores = static_cast<double>(q.getDimSize(0)) * q.getDimSize(1) *
                  q.getDimSize(2) * k.getDimSize(2);
  int64_t d = q.getDimSize(3), dv = v.getDimSize(3);
  cost.matmulFlops = 2 * scores * (2 * dv + 2 * d + (op.getSoftcap() ? d : 0));
  cost.elementwiseFlops =
      scores * (5 + (op.getMask() ? 1 : 0) + (op.getDropoutRatio() ? 4 : 0) +
                (op.getSoftcap() ? 4 : 0));
  cost.transcendentalFlops = op.getSoftcap() ? scores : 0;
  return cost;
}

OpCost costOf(LogSoftmaxOp op) {
  // Per line of n: max (n - 1), subtract (n), exp (n), sum (n - 1), log (1),
  // subtract (n).
  OpCost cost = dataMovementCost(op);
  Lines lines = linesAlong(op.getInput(), op.getDim());
  cost.elementwiseFlops = lines.rows * (4 * lines.n - 2);
  cost.transcendentalFlops = lines.rows * (lines.n + 1);
  return cost;
}

OpCost costOf(LayerNormOp op) {
  // Per line of n: mean (n - 1 additions, a division), center (n), variance
  // (n squares, n - 1 additions, a division), + epsilon (1), rsqrt, scale by
  // it (n), by `scale` (n), add `bias` (n).
  OpCost cost = dataMovementCost(op);
  Lines lines = trailingLines(op.getInput(), op.getDim());
  cost.elementwiseFlops = lines.rows * ((op.getBias() ? 7 : 6) * lines.n + 1);
  cost.transcendentalFlops = lines.rows;
  return cost;
}

OpCost costOf(RMSNormOp op) {
  // Per line of n: squares (n), their mean (n - 1 additions, a division),
  // + epsilon (1), rsqrt, scale by it (n), by `scale` (n).
  OpCost cost = dataMovementCost(op);
  Lines lines = trailingLines(op.getInput(), op.getDim());
  cost.elementwiseFlops = lines.rows * (4 * lines.n + 1);
  cost.transcendentalFlops = lines.rows;
  return cost;
}

// Per rotated pair: four products and two sums; the rest is a copy.
OpCost costOf(RotaryOp op) {
  OpCost cost = dataMovementCost(op);
  Lines lines =
      linesAlong(op.getInput(), -1 + op.getInput().getType().getRank());
  cost.elementwiseFlops = lines.rows * op.getRotaryDim() / 2 * 6;
  return cost;
}

OpCost costOf(GatherOp op) { return selectionCost(op, op.getIndices()); }
OpCost costOf(GatherElementsOp op) {
  return selectionCost(op, op.getIndices());
}
OpCost costOf(SliceOp op) { return selectionCost(op); }
OpCost costOf(ShardOp op) { return selectionCost(op); }

// One addition per update.
OpCost costOf(ScatterAddOp op) {
  OpCost cost = dataMovementCost(op);
  cost.elementwiseFlops = numElements(op.getUpdates());
  return cost;
}
// One comparison or product per update.
OpCost costOf(ScatterReduceOp op) {
  OpCost cost = dataMovementCost(op);
  cost.elementwiseFlops = numElements(op.getUpdates());
  return cost;
}
OpCost costOf(ScatterElementsAddOp op) {
  OpCost cost = dataMovementCost(op);
  cost.elementwiseFlops = numElements(op.getUpdates());
  return cost;
}

// A fusion group reads its inputs and writes its results once; its
// arithmetic is its ops'.
OpCost costOf(FusionOp op) {
  OpCost cost = dataMovementCost(op);
  for (Operation &inner : op.getBody().front().without_terminator()) {
    OpCost part = getOpCost(&inner);
    cost.elementwiseFlops += part.elementwiseFlops;
    cost.transcendentalFlops += part.transcendentalFlops;
    cost.matmulFlops += part.matmulFlops;
  }
  return cost;
}
OpCost costOf(YieldOp) { return OpCost(); }

/// Every other op: the cost of its traits.
template <typename OpTy> OpCost costOf(OpTy op) {
  return traitCost(op.getOperation());
}

template <typename OpTy>
struct CostModel
    : public CostOpInterface::ExternalModel<CostModel<OpTy>, OpTy> {
  OpCost getCost(Operation *op) const { return costOf(cast<OpTy>(op)); }
};

template <typename... OpTys> void attachCostModels(MLIRContext &context) {
  (OpTys::template attachInterface<CostModel<OpTys>>(context), ...);
}

} // namespace

void mlir::dtc::attachOpCostModels(MLIRContext &context) {
  attachCostModels<
#define GET_OP_LIST
#include "dtc/Dialect/DTC/IR/DTCOps.cpp.inc"
      >(context);
}

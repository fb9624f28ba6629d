//===- DTCOpVJPs.cpp - vector-Jacobian products of dtc ops ----------------===//
//
// DifferentiableOpInterface for every differentiable dtc op: given the
// gradient g of the op's result(s), the gradient of each operand, written in
// dtc ops. Conventions follow PyTorch's autograd where a derivative is not
// unique (ties of max/min split the gradient evenly, relu'(0) = 0,
// |x|'(0) = 0). Broadcast operands get the gradient summed back to their
// shape.
//
//===----------------------------------------------------------------------===//

#include "dtc/Dialect/DTC/IR/DTCOpEmitter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// The vocabulary VJPs are written in: dtc ops built at one location.
class Emitter : public OpEmitter {
public:
  using OpEmitter::OpEmitter;

  Value compare(ComparisonPredicate p, Value x, Value y) {
    return CompareOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value t, Value f) {
    return SelectOp::create(b, loc, c, t, f);
  }

  Value scale(Value x, double factor) { return mul(x, scalar(factor, x)); }
  Value broadcastTo(Value x, Type type) {
    if (x.getType() == type)
      return x;
    return BroadcastOp::create(b, loc, type, x);
  }
};

/// Shape of a reduction's result with the reduced dimensions kept as 1.
SmallVector<int64_t> keptShape(Value input, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(input.getType()).getShape());
  for (int64_t dim : dims)
    shape[dim] = 1;
  return shape;
}

/// The gradient of max (isMax) or min with respect to its lhs: all of g
/// where lhs wins, half of it on ties.
Value extremumGrad(Emitter &e, Value g, Value self, Value other, bool isMax) {
  Value wins = e.compare(
      isMax ? ComparisonPredicate::GT : ComparisonPredicate::LT, self, other);
  Value ties = e.compare(ComparisonPredicate::EQ, self, other);
  Value zero = e.scalar(0, g);
  return e.sumTo(e.select(wins, g, e.select(ties, e.scale(g, 0.5), zero)),
                 self.getType());
}

/// The gradient of a reduction by max or min: spread evenly over the
/// elements equal to the extremum (as torch.amax/amin do).
template <typename OpTy>
Value extremumReduceGrad(Emitter &e, OpTy op, Value g) {
  Value input = op.getInput();
  SmallVector<int64_t> kept = keptShape(input, op.getDims());
  Value extremum =
      e.broadcastTo(e.reshape(op.getResult(), kept), input.getType());
  Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
  Value mask = e.castTo(e.compare(ComparisonPredicate::EQ, input, extremum),
                        elementType);
  Value count = e.reduceSum(mask, op.getDims(), /*keepDims=*/true);
  Value spread = e.div(e.reshape(g, kept), count);
  return e.mul(e.broadcastTo(spread, input.getType()), mask);
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

#define DTC_UNARY_VJP(OP, FORMULA)                                             \
  LogicalResult OP::buildVJP(OpBuilder &b, ValueRange resultGrads,             \
                             SmallVectorImpl<Value> &operandGrads) {           \
    Emitter e(b, getLoc());                                                    \
    Value g = resultGrads[0], x = getInput(), z = getResult();                 \
    (void)x;                                                                   \
    (void)z;                                                                   \
    operandGrads.push_back(FORMULA);                                           \
    return success();                                                          \
  }

DTC_UNARY_VJP(NegOp, e.neg(g))
DTC_UNARY_VJP(AbsOp,
              e.select(e.compare(ComparisonPredicate::GT, x, e.scalar(0, x)), g,
                       e.select(e.compare(ComparisonPredicate::LT, x,
                                          e.scalar(0, x)),
                                e.neg(g), e.scalar(0, g))))
DTC_UNARY_VJP(ReluOp,
              e.select(e.compare(ComparisonPredicate::GT, x, e.scalar(0, x)), g,
                       e.scalar(0, g)))
DTC_UNARY_VJP(ExpOp, e.mul(g, z))
DTC_UNARY_VJP(LogOp, e.div(g, x))
DTC_UNARY_VJP(SqrtOp, e.div(g, e.scale(z, 2)))
DTC_UNARY_VJP(RsqrtOp, e.mul(e.scale(g, -0.5), e.mul(z, e.mul(z, z))))
DTC_UNARY_VJP(ReciprocalOp, e.neg(e.mul(g, e.mul(z, z))))
DTC_UNARY_VJP(TanhOp, e.mul(g, e.sub(e.scalar(1, z), e.mul(z, z))))
DTC_UNARY_VJP(ErfOp,
              e.mul(e.scale(g, 2 / std::sqrt(M_PI)), e.exp(e.neg(e.mul(x, x)))))
DTC_UNARY_VJP(SinOp, e.mul(g, e.cos(x)))
DTC_UNARY_VJP(CosOp, e.neg(e.mul(g, e.sin(x))))
DTC_UNARY_VJP(SigmoidOp, e.mul(g, e.mul(z, e.sub(e.scalar(1, z), z))))
DTC_UNARY_VJP(SoftplusOp, e.mul(g, e.sigmoid(x)))
#undef DTC_UNARY_VJP

LogicalResult DropoutOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  // The same mask, redrawn: dropout is linear in its input.
  operandGrads.append(
      {DropoutOp::create(b, getLoc(), resultGrads[0].getType(), resultGrads[0],
                         getStep(), getOffset(), getRatio(), getSeed(),
                         getStream(), getGlobalShapeAttr())
           .getResult(),
       Value()});
  return success();
}

LogicalResult SiluOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value x = getInput(), s = e.sigmoid(x);
  // d/dx x*s(x) = s * (1 + x * (1 - s))
  Value d = e.mul(s, e.add(e.scalar(1, x), e.mul(x, e.sub(e.scalar(1, s), s))));
  operandGrads.push_back(e.mul(resultGrads[0], d));
  return success();
}

LogicalResult GeluOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value x = getInput(), d;
  if (getApproximate() == GeluApproximation::None) {
    // Phi(x) + x * phi(x)
    Value cdf =
        e.scale(e.add(e.scalar(1, x), e.erf(e.scale(x, M_SQRT1_2))), 0.5);
    Value pdf =
        e.scale(e.exp(e.scale(e.mul(x, x), -0.5)), 1 / std::sqrt(2 * M_PI));
    d = e.add(cdf, e.mul(x, pdf));
  } else {
    // 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3c x^2), t = tanh(k (x + c x^3))
    const double k = std::sqrt(2 / M_PI), c = 0.044715;
    Value x2 = e.mul(x, x);
    Value t = e.tanh(e.scale(e.add(x, e.scale(e.mul(x2, x), c)), k));
    Value inner = e.scale(e.add(e.scalar(1, x), e.scale(x2, 3 * c)), k);
    Value sech2 = e.sub(e.scalar(1, t), e.mul(t, t));
    d = e.add(e.scale(e.add(e.scalar(1, t), t), 0.5),
              e.mul(e.scale(x, 0.5), e.mul(sech2, inner)));
  }
  operandGrads.push_back(e.mul(resultGrads[0], d));
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops, select, cast
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0];
  operandGrads.append(
      {e.sumTo(g, getLhs().getType()), e.sumTo(g, getRhs().getType())});
  return success();
}

LogicalResult SubOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0];
  operandGrads.append(
      {e.sumTo(g, getLhs().getType()), e.sumTo(e.neg(g), getRhs().getType())});
  return success();
}

LogicalResult MulOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], x = getLhs(), y = getRhs();
  operandGrads.append(
      {e.sumTo(e.mul(g, y), x.getType()), e.sumTo(e.mul(g, x), y.getType())});
  return success();
}

LogicalResult DivOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], x = getLhs(), y = getRhs();
  operandGrads.append(
      {e.sumTo(e.div(g, y), x.getType()),
       e.sumTo(e.neg(e.div(e.mul(g, x), e.mul(y, y))), y.getType())});
  return success();
}

LogicalResult ModOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], x = getLhs(), y = getRhs();
  // r = x - q y with q the rounded quotient, constant almost everywhere:
  // dr/dx = 1, dr/dy = -q = -(x - r) / y.
  Value quotient = e.div(e.sub(x, getResult()), y);
  operandGrads.append({e.sumTo(g, x.getType()),
                       e.sumTo(e.neg(e.mul(g, quotient)), y.getType())});
  return success();
}

LogicalResult PowOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], x = getLhs(), y = getRhs(), z = getResult();
  Value zero = e.scalar(0, g);
  // d/dx = y x^(y-1) (0 where y == 0); d/dy = z ln x (0 where x == 0, y >= 0).
  Value dx = e.mul(y, e.pow(x, e.sub(y, e.scalar(1, y))));
  Value gx = e.select(e.compare(ComparisonPredicate::EQ, y, e.scalar(0, y)),
                      zero, e.mul(g, dx));
  Value baseZero = e.compare(ComparisonPredicate::EQ, x, e.scalar(0, x));
  Value nonNegative = e.compare(ComparisonPredicate::GE, y, e.scalar(0, y));
  Value gy = e.select(AndOp::create(b, getLoc(), baseZero, nonNegative), zero,
                      e.mul(g, e.mul(z, e.log(x))));
  operandGrads.append({e.sumTo(gx, x.getType()), e.sumTo(gy, y.getType())});
  return success();
}

LogicalResult MaxOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0];
  operandGrads.append({extremumGrad(e, g, getLhs(), getRhs(), true),
                       extremumGrad(e, g, getRhs(), getLhs(), true)});
  return success();
}

LogicalResult MinOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0];
  operandGrads.append({extremumGrad(e, g, getLhs(), getRhs(), false),
                       extremumGrad(e, g, getRhs(), getLhs(), false)});
  return success();
}

LogicalResult SelectOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], zero = e.scalar(0, g), c = getCond();
  operandGrads.append({Value(),
                       e.sumTo(e.select(c, g, zero), getOnTrue().getType()),
                       e.sumTo(e.select(c, zero, g), getOnFalse().getType())});
  return success();
}

LogicalResult CastOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Type inputType = getInput().getType().getElementType();
  Emitter e(b, getLoc());
  operandGrads.push_back(isa<FloatType>(inputType)
                             ? e.castTo(resultGrads[0], inputType)
                             : Value());
  return success();
}

//===----------------------------------------------------------------------===//
// Matmul, reductions, softmax, norms
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], lhs = getLhs(), rhs = getRhs();
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  // With L and R the matrices as multiplied (after the transposes):
  // dL = g R^T and dR = L^T g, transposed back to the stored layouts.
  Value gl = tl ? MatmulOp::create(b, getLoc(), rhs, g, tr, true).getResult()
                : MatmulOp::create(b, getLoc(), g, rhs, false, !tr).getResult();
  Value gr = tr ? MatmulOp::create(b, getLoc(), g, lhs, true, tl).getResult()
                : MatmulOp::create(b, getLoc(), lhs, g, !tl, false).getResult();
  operandGrads.append({e.sumTo(gl, lhs.getType()), e.sumTo(gr, rhs.getType())});
  return success();
}

LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value kept = e.reshape(resultGrads[0], keptShape(getInput(), getDims()));
  operandGrads.push_back(e.broadcastTo(kept, getInput().getType()));
  return success();
}

LogicalResult ReduceMeanOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  int64_t count = 1;
  for (int64_t dim : getDims())
    count *= getInput().getType().getDimSize(dim);
  Value kept = e.reshape(resultGrads[0], keptShape(getInput(), getDims()));
  operandGrads.push_back(
      e.broadcastTo(e.scale(kept, 1.0 / count), getInput().getType()));
  return success();
}

LogicalResult ReduceMaxOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  operandGrads.push_back(extremumReduceGrad(e, *this, resultGrads[0]));
  return success();
}

LogicalResult ReduceMinOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  operandGrads.push_back(extremumReduceGrad(e, *this, resultGrads[0]));
  return success();
}

LogicalResult CumSumOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  // Each input element feeds the outputs on the other side of it.
  operandGrads.push_back(CumSumOp::create(b, getLoc(), resultGrads[0], getDim(),
                                          getExclusive(), !getReverse())
                             .getResult());
  return success();
}

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], z = getResult();
  Value dot = e.reduceSum(e.mul(g, z), {static_cast<int64_t>(getDim())}, true);
  operandGrads.push_back(e.mul(z, e.sub(g, dot)));
  return success();
}

LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0];
  Value total = e.reduceSum(g, {static_cast<int64_t>(getDim())}, true);
  operandGrads.push_back(e.sub(g, e.mul(e.exp(getResult()), total)));
  return success();
}

/// The key or value heads `x` [batch, kv_heads, keys, d] repeated for each
/// of the `group` query heads that read them.
static Value expandHeads(Emitter &e, Value x, int64_t group) {
  if (group == 1)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> s = type.getShape();
  Value one = e.reshape(x, {s[0], s[1], 1, s[2], s[3]});
  Value many = e.broadcastTo(
      one, type.clone({s[0], s[1], group, s[2], s[3]}));
  return e.reshape(many, {s[0], s[1] * group, s[2], s[3]});
}

/// The gradient of expandHeads: each group's gradients summed.
static Value sumHeads(Emitter &e, Value grad, int64_t group) {
  if (group == 1)
    return grad;
  ArrayRef<int64_t> s = cast<RankedTensorType>(grad.getType()).getShape();
  Value groups = e.reshape(grad, {s[0], s[1] / group, group, s[2], s[3]});
  return e.reduceSum(groups, {2}, /*keepDims=*/false);
}

/// `x`, of the probabilities' shape, dropped as the attention `op`
/// (dtc.attention or its gradient) drops its probabilities.
template <typename OpTy>
static Value attentionDropout(OpBuilder &b, OpTy op, Value x) {
  if (!op.getDropoutRatio())
    return x;
  return DropoutOp::create(b, op.getLoc(), x.getType(), x, op.getStep(),
                           op.getOffset(), op.getDropoutRatioAttr(),
                           op.getSeedAttr(), op.getStreamAttr(),
                           op.getGlobalShapeAttr());
}

/// The gradient of the attention `op`'s (capped, masked) scores, given its
/// result's: dS = P (dP - rowsum(dP P)) with dP = dropout(dOut V^T), zero
/// where an i1 mask masks.
template <typename OpTy>
static Value attentionScoresGrad(OpBuilder &b, OpTy op, Value dOut) {
  Emitter e(b, op.getLoc());
  Value probs = op.getProbs();
  Value v = expandHeads(e, op.getV(), op.getGroupSize());
  Value dProbs = attentionDropout(
      b, op, MatmulOp::create(b, op.getLoc(), dOut, v, false, true));
  Value dot = e.reduceSum(e.mul(dProbs, probs), {3}, /*keepDims=*/true);
  Value dScores = e.mul(probs, e.sub(dProbs, dot));
  Value mask = op.getMask();
  if (mask &&
      cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1))
    dScores = e.select(mask, dScores, e.zeros(dScores.getType()));
  return dScores;
}

/// dV = P'^T dO, dQ = dS K s, dK = dS^T Q s (P' = dropout(P)).
SmallVector<Value> AttentionGradOp::expand(OpBuilder &b) {
  Emitter e(b, getLoc());
  Value dOut = getResultGrad(), q = getQ();
  int64_t group = getGroupSize();
  Value k = expandHeads(e, getK(), group);
  Value dV = MatmulOp::create(
      b, getLoc(), attentionDropout(b, *this, getProbs()), dOut, true, false);
  Value dScores = attentionScoresGrad(b, *this, dOut);
  double scale = getScale().convertToDouble();
  if (std::optional<APFloat> softcap = getSoftcap()) {
    // cap(s) = c tanh(s / c): d cap / d s = 1 - tanh(s / c)^2, with s the
    // scaled scores, computed again.
    double c = softcap->convertToDouble();
    Value raw = MatmulOp::create(b, getLoc(), q, k, false, true);
    Value t = TanhOp::create(b, getLoc(), e.mul(raw, e.scalar(scale / c, q)));
    dScores = e.mul(dScores, e.sub(e.scalar(1, q), e.mul(t, t)));
  }
  Value scaled = e.mul(dScores, e.scalar(scale, q));
  Value dQ = MatmulOp::create(b, getLoc(), scaled, k, false, false);
  Value dK = MatmulOp::create(b, getLoc(), scaled, q, true, false);
  return {dQ, sumHeads(e, dK, group), sumHeads(e, dV, group)};
}

/// Attention's backward is one op, dtc.attention_grad, with the
/// probabilities P the forward saved (recomputing them from q and k, as
/// FlashAttention does, is a rematerialization choice). A float mask's
/// gradient, dS summed to its shape, is made apart: dead (and removed)
/// unless the mask is computed from parameters.
LogicalResult AttentionOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (resultGrads[1])
    return emitOpError("cannot differentiate through the probabilities");
  auto grad = AttentionGradOp::create(
      b, getLoc(), getQ(), getK(), getV(), getProbs(), resultGrads[0],
      getMask(), getStep(), getOffset(), getScaleAttr(), getMaskedValueAttr(),
      getDropoutRatioAttr(), getSeedAttr(), getStreamAttr(),
      getGlobalShapeAttr(), getSoftcapAttr());
  operandGrads.append(grad->result_begin(), grad->result_end());
  Value mask = getMask();
  if (mask) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (maskType.getElementType().isInteger(1)) {
      operandGrads.push_back(Value());
    } else {
      Emitter e(b, getLoc());
      Value dScores = attentionScoresGrad(b, *this, resultGrads[0]);
      operandGrads.push_back(
          e.sumTo(e.castTo(dScores, maskType.getElementType()), maskType));
    }
  }
  if (getStep())
    operandGrads.push_back(Value());
  if (getOffset())
    operandGrads.push_back(Value());
  return success();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (resultGrads[1] || resultGrads[2])
    return emitOpError("cannot differentiate through the mean and "
                       "inv_std_dev results");
  Emitter e(b, getLoc());
  Value g = resultGrads[0], x = getInput();
  SmallVector<int64_t> dims =
      trailingDims(getDim(), getInput().getType().getRank());
  Value xhat = e.mul(e.sub(x, getMean()), getInvStdDev());
  Value gxhat = e.mul(g, getScale());
  // dx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))
  Value centered = e.sub(e.sub(gxhat, e.reduceMean(gxhat, dims)),
                         e.mul(xhat, e.reduceMean(e.mul(gxhat, xhat), dims)));
  operandGrads.append({e.mul(getInvStdDev(), centered),
                       e.sumTo(e.mul(g, xhat), getScale().getType())});
  operandGrads.push_back(getBias() ? e.sumTo(g, getBias().getType()) : Value());
  return success();
}

LogicalResult RotaryOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], x = getInput(), c = getCos(), s = getSin();
  // The rotation's transpose turns by the opposite angle.
  Value gx = RotaryOp::create(b, getLoc(), g, c, e.neg(s), getRotaryDimAttr(),
                              getInterleavedAttr());
  // Per pair: d/dcos = g1 x1 + g2 x2, d/dsin = g2 x1 - g1 x2.
  int64_t half = getRotaryDim() / 2;
  bool interleaved = getInterleaved();
  auto pairPart = [&](Value v, int64_t part) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> starts(rank, 0), sizes(type.getShape()),
        strides(rank, 1);
    starts.back() = interleaved ? part : part * half;
    sizes.back() = half;
    strides.back() = interleaved ? 2 : 1;
    return SliceOp::create(b, getLoc(), v, starts, sizes, strides);
  };
  Value x1 = pairPart(x, 0), x2 = pairPart(x, 1), g1 = pairPart(g, 0),
        g2 = pairPart(g, 1);
  Value gc = e.add(e.mul(g1, x1), e.mul(g2, x2));
  Value gs = e.sub(e.mul(g2, x1), e.mul(g1, x2));
  operandGrads.append({gx, e.sumTo(gc, c.getType()), e.sumTo(gs, s.getType())});
  return success();
}

LogicalResult RMSNormOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0], x = getInput();
  SmallVector<int64_t> dims =
      trailingDims(getDim(), getInput().getType().getRank());
  Value eps = e.scalar(getEpsilon().convertToDouble(), x);
  Value r = e.rsqrt(e.add(e.reduceMean(e.mul(x, x), dims), eps));
  Value gs = e.mul(g, getScale());
  // dx = r * gs - x * r^3 * mean(gs * x)
  Value r3 = e.mul(r, e.mul(r, r));
  Value gx = e.sub(e.mul(r, gs),
                   e.mul(x, e.mul(r3, e.reduceMean(e.mul(gs, x), dims))));
  operandGrads.append(
      {gx, e.sumTo(e.mul(g, e.mul(x, r)), getScale().getType())});
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value zeros = e.zeros(getInput().getType());
  operandGrads.append(
      {ScatterAddOp::create(b, getLoc(), zeros.getType(), zeros, getIndices(),
                            resultGrads[0], getDim())
           .getResult(),
       Value()});
  return success();
}

LogicalResult ScatterReduceOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Location loc = getLoc();
  Value g = resultGrads[0], x = getInput(), u = getUpdates(), r = getResult();
  Value indices = getIndices();
  int64_t dim = getDim();
  auto gather = [&](Value v) -> Value {
    return GatherOp::create(b, loc, v, indices, dim);
  };
  auto scatter = [&](Value into, Value updates,
                     ScatterReduction kind) -> Value {
    return ScatterReduceOp::create(b, loc, into.getType(), into, indices,
                                   updates, dim, kind);
  };
  auto scatterAdd = [&](Value into, Value updates) -> Value {
    return ScatterAddOp::create(b, loc, into.getType(), into, indices, updates,
                                dim);
  };
  auto splat = [&](double value, Value like) -> Value {
    return BroadcastOp::create(b, loc, like.getType(), e.scalar(value, like));
  };
  auto indicator = [&](Value condition) {
    return e.select(condition, e.scalar(1, g), e.scalar(0, g));
  };
  Value zero = e.scalar(0, g);
  if (getKind() == ScatterReduction::Mul) {
    // r = x * (the product of the updates at x). An update's cofactor is
    // r / u, or, for a zero update, the product of the other factors: zero
    // unless it is the only zero update there.
    Value uZero = e.compare(ComparisonPredicate::EQ, u, e.scalar(0, u));
    Value nonzeroU = e.select(uZero, e.scalar(1, u), u);
    Value gx = e.mul(g, scatter(splat(1, x), u, ScatterReduction::Mul));
    Value zeroUpdates = scatterAdd(splat(0, x), indicator(uZero));
    Value nonzeroProduct =
        e.mul(x, scatter(splat(1, x), nonzeroU, ScatterReduction::Mul));
    Value onlyZero =
        e.compare(ComparisonPredicate::EQ, gather(zeroUpdates), e.scalar(1, g));
    Value cofactor =
        e.select(uZero, e.select(onlyZero, gather(nonzeroProduct), zero),
                 e.div(gather(r), nonzeroU));
    operandGrads.append({gx, Value(), e.mul(gather(g), cofactor)});
    return success();
  }
  // Max and min: the elements equal to the result share its gradient.
  Value xWins = e.compare(ComparisonPredicate::EQ, x, r);
  Value uWins = e.compare(ComparisonPredicate::EQ, u, gather(r));
  Value winners =
      e.add(indicator(xWins), scatterAdd(splat(0, x), indicator(uWins)));
  Value share = e.div(g, e.max(winners, e.scalar(1, g)));
  operandGrads.append({e.select(xWins, share, zero), Value(),
                       e.select(uWins, gather(share), zero)});
  return success();
}

LogicalResult ScatterAddOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  operandGrads.append(
      {g, Value(),
       GatherOp::create(b, getLoc(), g, getIndices(), getDim()).getResult()});
  return success();
}

LogicalResult GatherElementsOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                         SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value zeros = e.zeros(getInput().getType());
  operandGrads.append(
      {ScatterElementsAddOp::create(b, getLoc(), zeros.getType(), zeros,
                                    getIndices(), resultGrads[0], getDim())
           .getResult(),
       Value()});
  return success();
}

LogicalResult
ScatterElementsAddOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  operandGrads.append(
      {g, Value(),
       GatherElementsOp::create(b, getLoc(), getUpdates().getType(), g,
                                getIndices(), getDim())
           .getResult()});
  return success();
}

LogicalResult TopKOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  // The selected elements receive their values' gradients.
  Emitter e(b, getLoc());
  Value zeros = e.zeros(getInput().getType());
  Value g = resultGrads[0] ? resultGrads[0] : e.zeros(getValues().getType());
  operandGrads.push_back(ScatterElementsAddOp::create(b, getLoc(),
                                                      zeros.getType(), zeros,
                                                      getIndices(), g, getDim())
                             .getResult());
  return success();
}

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  operandGrads.push_back(
      e.reshape(resultGrads[0], getInput().getType().getShape()));
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  operandGrads.push_back(
      TransposeOp::create(b, getLoc(), resultGrads[0], inverse).getResult());
  return success();
}

LogicalResult BroadcastOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  operandGrads.push_back(e.sumTo(resultGrads[0], getInput().getType()));
  return success();
}

LogicalResult ConcatOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  int64_t dim = getDim(), offset = 0;
  for (Value input : getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> starts(type.getRank(), 0), strides(type.getRank(), 1);
    starts[dim] = offset;
    offset += type.getDimSize(dim);
    operandGrads.push_back(SliceOp::create(b, getLoc(), resultGrads[0], starts,
                                           type.getShape(), strides)
                               .getResult());
  }
  return success();
}

LogicalResult SliceOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  // One of equal pieces along one dimension (a fused projection's chunk):
  // the gradient between zero pieces, a concat, which partitions like the
  // fused projection (an update_slice of a split dimension does not).
  RankedTensorType input = getInput().getType();
  ArrayRef<int64_t> sizes = getSizes();
  SmallVector<int64_t> cut;
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (sizes[d] != input.getDimSize(d))
      cut.push_back(d);
  if (cut.size() == 1) {
    int64_t d = cut[0], size = sizes[d];
    if (getStrides()[d] == 1 && size > 0 && input.getDimSize(d) % size == 0 &&
        getStarts()[d] % size == 0) {
      SmallVector<Value> pieces;
      for (int64_t i = 0, n = input.getDimSize(d) / size; i < n; ++i)
        pieces.push_back(i == getStarts()[d] / size ? resultGrads[0]
                                                    : e.zeros(getType()));
      operandGrads.push_back(
          ConcatOp::create(b, getLoc(), pieces, d).getResult());
      return success();
    }
  }
  Value zeros = e.zeros(getInput().getType());
  operandGrads.push_back(UpdateSliceOp::create(b, getLoc(), zeros.getType(),
                                               resultGrads[0], zeros,
                                               getStarts(), getStrides())
                             .getResult());
  return success();
}

LogicalResult UpdateSliceOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  Value g = resultGrads[0];
  Value window =
      SliceOp::create(b, getLoc(), g, getStarts(),
                      getUpdate().getType().getShape(), getStrides());
  Value rest = UpdateSliceOp::create(b, getLoc(), g.getType(),
                                     e.zeros(getUpdate().getType()), g,
                                     getStarts(), getStrides());
  operandGrads.append({window, rest});
  return success();
}

LogicalResult SplitOp::buildVJP(OpBuilder &b, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  Emitter e(b, getLoc());
  SmallVector<Value> pieces;
  for (auto [result, grad] : llvm::zip(getResults(), resultGrads))
    pieces.push_back(grad ? grad : e.zeros(result.getType()));
  operandGrads.push_back(
      ConcatOp::create(b, getLoc(), pieces, getDim()).getResult());
  return success();
}

//===- DTCOpEmitter.h - elementwise dtc ops at one location -----*- C++ -*-===//
//
// The arithmetic that passes write (VJPs, optimizer updates) as calls:
// `e.mul(e.add(x, y), z)` instead of one create() per op, and the
// unbroadcasting every broadcasting op's VJP needs (sumTo).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_DIALECT_DTC_IR_DTCOPEMITTER_H
#define DTC_DIALECT_DTC_IR_DTCOPEMITTER_H

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dtc {

/// The dimensions [from, rank): those a norm normalizes from `from` on.
inline SmallVector<int64_t> trailingDims(int64_t from, int64_t rank) {
  SmallVector<int64_t> dims;
  for (int64_t i = from; i < rank; ++i)
    dims.push_back(i);
  return dims;
}

/// Builds elementwise dtc ops with `b` at `loc`.
class OpEmitter {
public:
  OpEmitter(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value pow(Value x, Value y) { return PowOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return MinOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return MaxOp::create(b, loc, x, y); }
  Value neg(Value x) { return NegOp::create(b, loc, x); }
  Value exp(Value x) { return ExpOp::create(b, loc, x); }
  Value log(Value x) { return LogOp::create(b, loc, x); }
  Value sqrt(Value x) { return SqrtOp::create(b, loc, x); }
  Value rsqrt(Value x) { return RsqrtOp::create(b, loc, x); }
  Value erf(Value x) { return ErfOp::create(b, loc, x); }
  Value tanh(Value x) { return TanhOp::create(b, loc, x); }
  Value sin(Value x) { return SinOp::create(b, loc, x); }
  Value cos(Value x) { return CosOp::create(b, loc, x); }
  Value sigmoid(Value x) { return SigmoidOp::create(b, loc, x); }
  Value reduceSum(Value x, ArrayRef<int64_t> dims, bool keepDims) {
    return ReduceSumOp::create(b, loc, x, dims, keepDims);
  }
  /// The mean and the maximum over `dims`, kept as size-1 dimensions.
  Value reduceMean(Value x, ArrayRef<int64_t> dims) {
    return ReduceMeanOp::create(b, loc, x, dims, /*keep_dims=*/true);
  }
  Value reduceMax(Value x, ArrayRef<int64_t> dims) {
    return ReduceMaxOp::create(b, loc, x, dims, /*keep_dims=*/true);
  }
  /// A float scalar of `like`'s element type.
  Value scalar(double value, Value like) {
    Type elementType = cast<RankedTensorType>(like.getType()).getElementType();
    auto type = RankedTensorType::get({}, elementType);
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type, FloatAttr::get(elementType, value)));
  }
  /// Float zeros of `type`.
  Value zeros(Type type) {
    auto tensorType = cast<RankedTensorType>(type);
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(tensorType,
                               FloatAttr::get(tensorType.getElementType(), 0)));
  }
  /// `x` as `elementType` (itself if it is).
  Value castTo(Value x, Type elementType) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == elementType)
      return x;
    return CastOp::create(b, loc, type.clone(elementType), x);
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getShape() == shape)
      return x;
    return ReshapeOp::create(b, loc, type.clone(shape), x);
  }

  /// Undoes numpy broadcasting: sums `grad` over the dimensions along which
  /// a value of `type` was broadcast, and reshapes it to `type`.
  Value sumTo(Value grad, Type type) {
    ArrayRef<int64_t> from = cast<RankedTensorType>(grad.getType()).getShape();
    ArrayRef<int64_t> to = cast<RankedTensorType>(type).getShape();
    int64_t lead = from.size() - to.size();
    SmallVector<int64_t> dims;
    for (int64_t i = 0, e = from.size(); i < e; ++i)
      if (i < lead || (to[i - lead] == 1 && from[i] != 1))
        dims.push_back(i);
    if (!dims.empty())
      grad = reduceSum(grad, dims, /*keepDims=*/true);
    return reshape(grad, to);
  }

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::dtc

#endif // DTC_DIALECT_DTC_IR_DTCOPEMITTER_H

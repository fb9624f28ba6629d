//===- LoopKernel.cpp - a fusion group as one kernel ----------------------===//
//
// Every op of a `loop` group is elementwise up to numpy broadcasting and
// row-major reshapes, so the whole group is one loop nest over its result's
// elements: each value is needed at an index that is an affine function of
// the result's (a broadcast reads index 0 along a stretched dimension; a
// reshape reads the same linear position, by floordiv and mod), each input
// is read through that map, and each op becomes its scalar arith/math form
// in the generic's body. No intermediate is stored. Scalars computed from
// scalars alone (an optimizer's bias corrections, a constant exponent) are
// computed once, before the loops.
//
// A `row_reduction` group is a row kernel: one loop over the rows its
// reductions keep, and per row one pass per reduction, folding what feeds
// it (the results of earlier reductions of the row read back from their
// buffers), then one pass per other result. A row (a vocabulary's logits,
// a hidden vector) stays in cache across its passes: a softmax, a norm's
// backward, a cross-entropy read their input from memory once.
//
//===----------------------------------------------------------------------===//

#include "dtc/Conversion/FusionToLinalg.h"

#include "dtc/Conversion/DTCToSCF.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Builds the scalar form of dtc ops at one location: on scalars, or with
/// `lanes` > 0 on vectors of that many elements (a row kernel's columns,
/// each lane computing its element with the same ops as a scalar would).
struct ScalarEmitter {
  OpBuilder &b;
  Location loc;
  int64_t lanes = 0;

  /// `element` as this emitter's values hold it.
  Type shaped(Type element) {
    return lanes ? Type(VectorType::get({lanes}, element)) : element;
  }
  /// `value` (a scalar attribute) as one of this emitter's values.
  Value splat(TypedAttr value) {
    if (!lanes)
      return arith::ConstantOp::create(b, loc, value);
    auto type = VectorType::get({lanes}, value.getType());
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, value));
  }
  Value constant(double value, Type type) {
    Type element = getElementTypeOrSelf(type);
    if (isa<FloatType>(element))
      return splat(b.getFloatAttr(element, value));
    return splat(b.getIntegerAttr(element, static_cast<int64_t>(value)));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sigmoid(Value x) {
    Value one = constant(1, x.getType());
    return div(one, add(one, math::ExpOp::create(
                                 b, loc, arith::NegFOp::create(b, loc, x))));
  }
  Value gelu(Value x, bool tanhForm) {
    Type t = x.getType();
    Value half = mul(constant(0.5, t), x);
    Value inner =
        tanhForm
            ? Value(math::TanhOp::create(
                  b, loc,
                  mul(constant(std::sqrt(2.0 / M_PI), t),
                      add(x, mul(constant(0.044715, t), mul(x, mul(x, x)))))))
            : Value(
                  math::ErfOp::create(b, loc, mul(x, constant(M_SQRT1_2, t))));
    return mul(half, add(constant(1, t), inner));
  }
  /// The remainder with the divisor's sign (floored) unless `truncated`.
  Value mod(Value x, Value y, bool truncated) {
    bool isFloat = isa<FloatType>(getElementTypeOrSelf(x));
    Value r = isFloat ? Value(arith::RemFOp::create(b, loc, x, y))
                      : Value(arith::RemSIOp::create(b, loc, x, y));
    if (truncated)
      return r;
    Value zero = constant(0, x.getType());
    auto less = [&](Value v) {
      return compare(ComparisonPredicate::LT, v, zero);
    };
    Value nonzero = compare(ComparisonPredicate::NE, r, zero);
    Value signsDiffer = arith::XOrIOp::create(b, loc, less(r), less(y));
    Value fix = arith::AndIOp::create(b, loc, nonzero, signsDiffer);
    Value shifted = isFloat ? Value(arith::AddFOp::create(b, loc, r, y))
                            : Value(arith::AddIOp::create(b, loc, r, y));
    return arith::SelectOp::create(b, loc, fix, shifted, r);
  }
  Value compare(ComparisonPredicate p, Value x, Value y) {
    if (isa<FloatType>(getElementTypeOrSelf(x))) {
      // As C++ compares doubles: NaN is unequal to everything.
      static const arith::CmpFPredicate preds[] = {
          arith::CmpFPredicate::OEQ, arith::CmpFPredicate::UNE,
          arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE,
          arith::CmpFPredicate::OGT, arith::CmpFPredicate::OGE};
      return arith::CmpFOp::create(b, loc, preds[static_cast<int>(p)], x, y);
    }
    static const arith::CmpIPredicate preds[] = {
        arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
        arith::CmpIPredicate::slt, arith::CmpIPredicate::sle,
        arith::CmpIPredicate::sgt, arith::CmpIPredicate::sge};
    return arith::CmpIOp::create(b, loc, preds[static_cast<int>(p)], x, y);
  }
  /// `x` converted to the element type `to`.
  FailureOr<Value> cast(Value x, Type to) {
    Type from = getElementTypeOrSelf(x);
    if (from == to)
      return x;
    auto fromFloat = dyn_cast<FloatType>(from);
    auto toFloat = dyn_cast<FloatType>(to);
    if (to.isInteger(1))
      return compare(ComparisonPredicate::NE, x, constant(0, from));
    Type result = shaped(to);
    if (fromFloat && toFloat)
      return fromFloat.getWidth() < toFloat.getWidth()
                 ? Value(arith::ExtFOp::create(b, loc, result, x))
                 : Value(arith::TruncFOp::create(b, loc, result, x));
    if (toFloat)
      return from.isInteger(1)
                 ? Value(arith::UIToFPOp::create(b, loc, result, x))
                 : Value(arith::SIToFPOp::create(b, loc, result, x));
    if (fromFloat)
      return Value(arith::FPToSIOp::create(b, loc, result, x));
    unsigned fromWidth = from.getIntOrFloatBitWidth(),
             toWidth = to.getIntOrFloatBitWidth();
    if (fromWidth < toWidth)
      return from.isInteger(1)
                 ? Value(arith::ExtUIOp::create(b, loc, result, x))
                 : Value(arith::ExtSIOp::create(b, loc, result, x));
    return Value(arith::TruncIOp::create(b, loc, result, x));
  }
};

/// The scalar form of `op` on `args`, computed in `type` (the result's
/// element type, or f32 for bf16 and f16 results), or failure for an op a
/// loop kernel does not compute.
FailureOr<Value> scalarForm(ScalarEmitter &e, Operation *op,
                            ArrayRef<Value> args, Type type) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  bool isFloat = isa<FloatType>(type);
  auto binary = [&](auto floatOp, auto intOp) -> Value {
    using F = decltype(floatOp);
    using I = decltype(intOp);
    return isFloat ? Value(F::create(b, loc, args[0], args[1]))
                   : Value(I::create(b, loc, args[0], args[1]));
  };
  return TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](ConstantOp constant) -> FailureOr<Value> {
        auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
        if (!value || !(value.isSplat() || value.getNumElements() == 1))
          return failure();
        return e.splat(cast<TypedAttr>(value.getSplatValue<Attribute>()));
      })
      .Case([&](BroadcastOp) { return args[0]; })
      .Case([&](AddOp) { return binary(arith::AddFOp(), arith::AddIOp()); })
      .Case([&](SubOp) { return binary(arith::SubFOp(), arith::SubIOp()); })
      .Case([&](MulOp) { return binary(arith::MulFOp(), arith::MulIOp()); })
      .Case([&](DivOp) { return binary(arith::DivFOp(), arith::DivSIOp()); })
      .Case(
          [&](MaxOp) { return binary(arith::MaximumFOp(), arith::MaxSIOp()); })
      .Case(
          [&](MinOp) { return binary(arith::MinimumFOp(), arith::MinSIOp()); })
      .Case([&](ModOp mod) {
        return e.mod(args[0], args[1], mod.getTruncated());
      })
      .Case([&](PowOp) -> FailureOr<Value> {
        if (!isFloat)
          return failure();
        return Value(math::PowFOp::create(b, loc, args[0], args[1]));
      })
      .Case([&](NegOp) -> Value {
        return isFloat ? Value(arith::NegFOp::create(b, loc, args[0]))
                       : Value(arith::SubIOp::create(
                             b, loc, e.constant(0, type), args[0]));
      })
      .Case([&](AbsOp) -> Value {
        return isFloat ? Value(math::AbsFOp::create(b, loc, args[0]))
                       : Value(math::AbsIOp::create(b, loc, args[0]));
      })
      .Case([&](ReluOp) -> Value {
        // x > 0 ? x : 0, as the reference kernel (NaN gives 0).
        Value zero = e.constant(0, type);
        return arith::SelectOp::create(
            b, loc, e.compare(ComparisonPredicate::GT, args[0], zero), args[0],
            zero);
      })
      .Case([&](ExpOp) { return Value(math::ExpOp::create(b, loc, args[0])); })
      .Case([&](LogOp) { return Value(math::LogOp::create(b, loc, args[0])); })
      .Case(
          [&](SqrtOp) { return Value(math::SqrtOp::create(b, loc, args[0])); })
      .Case([&](RsqrtOp) {
        return Value(math::RsqrtOp::create(b, loc, args[0]));
      })
      .Case([&](ReciprocalOp) { return e.div(e.constant(1, type), args[0]); })
      .Case(
          [&](TanhOp) { return Value(math::TanhOp::create(b, loc, args[0])); })
      .Case([&](ErfOp) { return Value(math::ErfOp::create(b, loc, args[0])); })
      .Case([&](SinOp) { return Value(math::SinOp::create(b, loc, args[0])); })
      .Case([&](CosOp) { return Value(math::CosOp::create(b, loc, args[0])); })
      .Case([&](SigmoidOp) { return e.sigmoid(args[0]); })
      .Case([&](SiluOp) { return e.mul(args[0], e.sigmoid(args[0])); })
      .Case([&](SoftplusOp) -> Value {
        // log1p(e^-|x|) + max(x, 0).
        Value zero = e.constant(0, type);
        Value decay = math::ExpOp::create(
            b, loc,
            arith::NegFOp::create(b, loc,
                                  math::AbsFOp::create(b, loc, args[0])));
        return e.add(math::Log1pOp::create(b, loc, decay),
                     arith::MaximumFOp::create(b, loc, args[0], zero));
      })
      .Case([&](GeluOp gelu) {
        return e.gelu(args[0],
                      gelu.getApproximate() == GeluApproximation::Tanh);
      })
      .Case([&](NotOp) -> Value {
        return arith::XOrIOp::create(b, loc, args[0],
                                     e.constant(1, args[0].getType()));
      })
      .Case([&](AndOp) {
        return Value(arith::AndIOp::create(b, loc, args[0], args[1]));
      })
      .Case([&](OrOp) {
        return Value(arith::OrIOp::create(b, loc, args[0], args[1]));
      })
      .Case([&](XorOp) {
        return Value(arith::XOrIOp::create(b, loc, args[0], args[1]));
      })
      .Case([&](CompareOp compare) {
        return e.compare(compare.getPredicate(), args[0], args[1]);
      })
      .Case([&](SelectOp) {
        return Value(
            arith::SelectOp::create(b, loc, args[0], args[1], args[2]));
      })
      .Case([&](CastOp) { return e.cast(args[0], type); })
      .Default([](Operation *) { return failure(); });
}

/// The index of a value of `shape` that the element at `index` of a
/// broadcast result of shape `result` reads, as numpy broadcasting does (a
/// dimension of size 1 reads 0; missing leading dimensions are dropped).
SmallVector<AffineExpr> broadcastIndex(ArrayRef<AffineExpr> index,
                                       ArrayRef<int64_t> shape,
                                       ArrayRef<int64_t> result,
                                       MLIRContext *context) {
  int64_t lead = result.size() - shape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, size] : llvm::enumerate(shape))
    exprs.push_back(size == 1 && result[lead + i] != 1
                        ? getAffineConstantExpr(0, context)
                        : index[lead + i]);
  return exprs;
}

/// The index of a value of `shape` that the element at `index` of its
/// row-major reshape to `result` reads: the same linear position.
SmallVector<AffineExpr> reshapeIndex(ArrayRef<AffineExpr> index,
                                     ArrayRef<int64_t> shape,
                                     ArrayRef<int64_t> result,
                                     MLIRContext *context) {
  AffineExpr linear = getAffineConstantExpr(0, context);
  for (auto [expr, size] : llvm::zip(index, result))
    linear = linear * size + expr;
  SmallVector<AffineExpr> exprs(shape.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    exprs[i] = linear.floorDiv(stride) % shape[i];
    stride *= shape[i];
  }
  return exprs;
}

} // namespace

AffineMap mlir::dtc::groupOperandMap(Operation *op, AffineMap map,
                                     Value operand) {
  MLIRContext *context = map.getContext();
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  ArrayRef<int64_t> from = cast<RankedTensorType>(operand.getType()).getShape();
  SmallVector<AffineExpr> index =
      isa<ReshapeOp>(op)
          ? reshapeIndex(map.getResults(), from, shape, context)
          : broadcastIndex(map.getResults(), from, shape, context);
  return simplifyAffineMap(AffineMap::get(map.getNumDims(), 0, index, context));
}

bool mlir::dtc::isGroupReduction(Operation *op) {
  return isa_and_nonnull<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(
      op);
}

void mlir::dtc::collectGroupAccesses(GroupAccess access,
                                     llvm::SetVector<GroupAccess> &ops,
                                     llvm::SetVector<GroupAccess> &inputs,
                                     const llvm::DenseSet<Value> *stored) {
  auto [value, map] = access;
  if (ops.contains(access) || inputs.contains(access))
    return;
  Operation *op = value.getDefiningOp();
  if (!op || isGroupReduction(op) || (stored && stored->contains(value))) {
    inputs.insert(access);
    return;
  }
  for (Value operand : op->getOperands()) {
    // (A dropout's offsets are not elementwise: dropoutAt reads them from
    // their buffer.)
    auto dropout = dyn_cast<DropoutOp>(op);
    if (dropout && operand == dropout.getOffset())
      continue;
    collectGroupAccesses({operand, groupOperandMap(op, map, operand)}, ops,
                         inputs, stored);
  }
  ops.insert(access);
}

FailureOr<RowGroupPlan> mlir::dtc::planRowGroup(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  Operation *yield = body.getTerminator();
  SmallVector<Operation *> reductions;
  for (Operation &op : body)
    if (isGroupReduction(&op))
      reductions.push_back(&op);
  if (reductions.empty())
    return fusion.emitError("a row_reduction group without a reduce_sum, "
                            "reduce_mean, reduce_max or reduce_min");
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  auto dimsOf = [](Operation *reduce) {
    return reduce->getAttrOfType<DenseI64ArrayAttr>("dims").asArrayRef();
  };
  RowGroupPlan plan;
  plan.rows.assign(shapeOf(reductions.front()->getOperand(0))
                       .drop_back(dimsOf(reductions.front()).size()));
  ArrayRef<int64_t> rows = plan.rows;
  for (Operation *reduce : reductions) {
    ArrayRef<int64_t> input = shapeOf(reduce->getOperand(0));
    auto element = reduce->getResult(0).getType();
    if (!isa<FloatType>(getElementTypeOrSelf(element)) ||
        input.drop_back(dimsOf(reduce).size()) != rows ||
        llvm::any_of(dimsOf(reduce), [&](int64_t d) {
          return d < static_cast<int64_t>(rows.size());
        }))
      return reduce->emitError("a row kernel folds floats along the trailing "
                               "dimensions of rows of one shape");
    if (!llvm::is_contained(yield->getOperands(), reduce->getResult(0)))
      return reduce->emitError("a row kernel keeps each reduction's result "
                               "in a group result");
    plan.passes.push_back({reduce->getOperand(0), reduce});
  }
  for (Value result : yield->getOperands())
    if (!isGroupReduction(result.getDefiningOp()))
      plan.passes.push_back({result, nullptr});
  for (auto [root, reduce] : plan.passes)
    if (shapeOf(root).take_front(rows.size()) != rows)
      return fusion.emitError("a row kernel writes results whose leading "
                              "dimensions are its rows");
  return plan;
}

namespace {

using Access = GroupAccess;

/// The scalar form of `op`; one whose values are bf16 or f16 is computed
/// in f32 and rounded once, as the reference executor rounds each op's
/// result (a GELU's inner products are not rounded to bf16).
FailureOr<Value> narrowScalarForm(ScalarEmitter &e, Operation *op,
                                  ArrayRef<Value> args) {
  auto isNarrow = [](Type t) {
    return isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(t));
  };
  Type f32 = e.b.getF32Type();
  Type type = getElementTypeOrSelf(op->getResult(0).getType());
  SmallVector<Value> wide;
  for (Value arg : args)
    wide.push_back(
        isNarrow(arg.getType())
            ? Value(arith::ExtFOp::create(e.b, e.loc, e.shaped(f32), arg))
            : arg);
  FailureOr<Value> scalar =
      scalarForm(e, op, wide, isNarrow(type) ? f32 : type);
  if (failed(scalar) || getElementTypeOrSelf(*scalar) == type)
    return scalar;
  return Value(arith::TruncFOp::create(e.b, e.loc, e.shaped(type), *scalar));
}

/// `map` applied to the loop indexes `loopIndexes`: the index of the value
/// computed at `map`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange loopIndexes) {
  SmallVector<Value> indexes;
  for (AffineExpr expr : map.getResults())
    indexes.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, expr, b.getContext()),
        loopIndexes));
  return indexes;
}

/// How a kernel finds the index of the element it computes at a map.
using IndexesAt = function_ref<SmallVector<Value>(AffineMap)>;

/// dtc.dropout at the element `indexes`: drawn by its index in the whole
/// tensor (plus the part's offset, read from the kernel's input buffer: it
/// must be a group input).
FailureOr<Value> dropoutAt(OpBuilder &b, Location loc, DropoutOp dropout,
                           ValueRange indexes, ArrayRef<Value> args,
                           ValueRange inputs) {
  ArrayRef<int64_t> local = dropout.getType().getShape();
  SmallVector<int64_t> whole(local);
  if (auto global = dropout.getGlobalShape())
    whole.assign(global->begin(), global->end());
  Value offsets;
  if (Value offset = dropout.getOffset()) {
    auto arg = dyn_cast<BlockArgument>(offset);
    if (!arg)
      return failure();
    offsets = inputs[arg.getArgNumber()];
  }
  Value global = emitWholeIndex(b, loc, indexes, whole, offsets);
  return emitDropout(b, loc, args[0], global, args[1], dropout.getSeed(),
                     dropout.getStream(), dropout.getRatio().convertToDouble());
}

/// Computes, before the loop nests, the group's values that are scalars
/// (rank 0) computed from scalars: the same for every element, such as an
/// optimizer's bias corrections. Kept in `scalars` (shared by a group's loop
/// nests).
void hoistScalars(OpBuilder &b, Location loc,
                  const llvm::SetVector<Access> &accesses, ValueRange inputs,
                  llvm::DenseMap<Value, Value> &scalars) {
  auto isScalar = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getRank() == 0;
  };
  ScalarEmitter e{b, loc};
  for (auto [value, map] : accesses) {
    Operation *op = value.getDefiningOp();
    if (scalars.count(value) || !isScalar(value) || isa<DropoutOp, IotaOp>(op))
      continue;
    SmallVector<Value> args;
    for (Value operand : op->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (arg && isScalar(arg))
        scalars.try_emplace(
            operand,
            memref::LoadOp::create(b, loc, inputs[arg.getArgNumber()], {}));
      args.push_back(scalars.lookup(operand)); // (none: not hoisted)
    }
    if (llvm::is_contained(args, Value()))
      continue;
    FailureOr<Value> scalar = isa<ReshapeOp>(op)
                                  ? FailureOr<Value>(args.front())
                                  : narrowScalarForm(e, op, args);
    if (succeeded(scalar))
      scalars[value] = *scalar;
  }
}

/// Computes the group values `accesses` (in order) at one element into
/// `values`, which holds the values read there; sets `failedOp` to an op it
/// has no scalar form for.
void computeAccesses(ScalarEmitter &e, const llvm::SetVector<Access> &accesses,
                     llvm::DenseMap<Access, Value> &values,
                     const llvm::DenseMap<Value, Value> &hoisted,
                     ValueRange inputs, IndexesAt indexesAt,
                     Operation *&failedOp) {
  for (auto [value, map] : accesses) {
    if (Value scalar = hoisted.lookup(value)) {
      values[{value, map}] =
          e.lanes ? Value(vector::BroadcastOp::create(
                        e.b, e.loc, e.shaped(scalar.getType()), scalar))
                  : scalar;
      continue;
    }
    Operation *op = value.getDefiningOp();
    SmallVector<Value> args;
    for (Value operand : op->getOperands())
      args.push_back(
          values.lookup({operand, groupOperandMap(op, map, operand)}));
    FailureOr<Value> scalar;
    if (isa<ReshapeOp>(op)) {
      scalar = args.front();
    } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
      scalar = dropoutAt(e.b, e.loc, dropout, indexesAt(map), args, inputs);
    } else if (auto iota = dyn_cast<IotaOp>(op)) {
      // Its own index along `dim`; on lanes, the first lane's plus the
      // lane's when that is the column (isLaneWise), else the same.
      Value index = indexesAt(map)[iota.getDim()];
      if (e.lanes) {
        Type indexes = e.shaped(e.b.getIndexType());
        index = vector::BroadcastOp::create(e.b, e.loc, indexes, index);
        unsigned column = map.getNumDims() - 1;
        if (map.getResult(iota.getDim()).isFunctionOfDim(column))
          index = arith::AddIOp::create(
              e.b, e.loc, index, vector::StepOp::create(e.b, e.loc, indexes));
      }
      Value i64 = arith::IndexCastOp::create(e.b, e.loc,
                                             e.shaped(e.b.getI64Type()), index);
      scalar = e.cast(i64, iota.getType().getElementType());
    } else {
      scalar = narrowScalarForm(e, op, args);
    }
    if (failed(scalar)) {
      // (The kernel is dropped; a stand-in keeps the body well formed.)
      failedOp = op;
      scalar = e.constant(0, getElementTypeOrSelf(value.getType()));
    }
    values[{value, map}] = *scalar;
  }
}

/// Writes group values `roots`, all of one shape, into `outs`, element by
/// element: one linalg.generic over their elements, reading the kernel's
/// `inputs` (the group's block arguments' buffers) at the indexes their ops
/// need, each value they share computed once per element.
void emitLoopNest(OpBuilder &b, Location loc, ArrayRef<Value> roots,
                  ValueRange outs, ValueRange inputs,
                  llvm::DenseMap<Value, Value> &hoisted, Operation *&failedOp) {
  MLIRContext *context = b.getContext();
  int64_t rank = cast<RankedTensorType>(roots.front().getType()).getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  llvm::SetVector<Access> accesses, reads;
  for (Value root : roots)
    collectGroupAccesses({root, identity}, accesses, reads);
  hoistScalars(b, loc, accesses, inputs, hoisted);
  // One generic input per (input, index) read; the results written in
  // order.
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (auto [arg, map] : reads) {
    operands.push_back(inputs[cast<BlockArgument>(arg).getArgNumber()]);
    maps.push_back(map);
  }
  maps.append(roots.size(), identity);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, TypeRange(), operands, outs, maps, iterators,
      [&](OpBuilder &nested, Location bodyLoc, ValueRange scalars) {
        ScalarEmitter e{nested, bodyLoc};
        llvm::DenseMap<Access, Value> values;
        for (auto [read, scalar] :
             llvm::zip(reads, scalars.drop_back(roots.size())))
          values[read] = scalar;
        auto indexesAt = [&](AffineMap map) {
          SmallVector<Value> loopIndexes;
          for (unsigned d = 0; d < map.getNumDims(); ++d)
            loopIndexes.push_back(linalg::IndexOp::create(nested, bodyLoc, d));
          return applyMap(nested, bodyLoc, map, loopIndexes);
        };
        computeAccesses(e, accesses, values, hoisted, inputs, indexesAt,
                        failedOp);
        SmallVector<Value> results;
        for (Value root : roots)
          results.push_back(values.lookup({root, identity}));
        linalg::YieldOp::create(nested, bodyLoc, results);
      });
}

} // namespace

SmallVector<SmallVector<unsigned>>
mlir::dtc::groupNests(ArrayRef<Value> roots) {
  SmallVector<llvm::DenseSet<Value>> tensorsRead(roots.size());
  for (auto [i, root] : llvm::enumerate(roots)) {
    int64_t rank = cast<RankedTensorType>(root.getType()).getRank();
    llvm::SetVector<Access> accesses, reads;
    collectGroupAccesses(
        {root, AffineMap::getMultiDimIdentityMap(rank, root.getContext())},
        accesses, reads);
    for (auto [arg, map] : reads)
      if (cast<RankedTensorType>(arg.getType()).getRank() > 0)
        tensorsRead[i].insert(arg);
  }
  // (Union-find over the results, joined by a common read.)
  auto leader = llvm::to_vector(llvm::seq<unsigned>(0, roots.size()));
  auto find = [&](unsigned i) {
    while (leader[i] != i)
      i = leader[i] = leader[leader[i]];
    return i;
  };
  for (unsigned i = 0; i < roots.size(); ++i)
    for (unsigned j = 0; j < i; ++j)
      if (roots[i].getType() == roots[j].getType() &&
          cast<RankedTensorType>(roots[i].getType()).getRank() > 0 &&
          llvm::any_of(tensorsRead[i],
                       [&](Value v) { return tensorsRead[j].contains(v); }))
        leader[find(i)] = find(j);
  SmallVector<SmallVector<unsigned>> nests;
  llvm::DenseMap<unsigned, unsigned> nestOf;
  for (unsigned i = 0; i < roots.size(); ++i) {
    auto [it, fresh] = nestOf.try_emplace(find(i), nests.size());
    if (fresh)
      nests.emplace_back();
    nests[it->second].push_back(i);
  }
  return nests;
}

namespace {

/// Folds (or, with no `init`, visits) every index of `shape`, row-major,
/// after the leading indexes `outer`; `body(indexes, carried)`.
SmallVector<Value> forEachIndex(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
    SmallVector<Value> outer, ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)>
        body) {
  if (shape.empty())
    return body(b, outer, init);
  return emitFor(
      b, loc, 0, shape.front(), 1, init, [&](Value i, ValueRange carried) {
        SmallVector<Value> indexes(outer);
        indexes.push_back(i);
        return forEachIndex(b, loc, shape.drop_front(), indexes, carried, body);
      });
}

/// Whether a row kernel's pass over one column dimension (the last of the
/// maps' dims) can compute kFoldLanes columns at once: every buffer it
/// reads is read along that dimension contiguously (as its last index) or
/// not at all, no value is bool in memory or 16-bit, no dropout (drawn by
/// its scalar index), and an iota's index is the column or independent of
/// it.
bool isLaneWise(const llvm::SetVector<GroupAccess> &accesses,
                const llvm::SetVector<GroupAccess> &reads) {
  auto alongColumn = [](AffineExpr expr, unsigned column) {
    return expr == getAffineDimExpr(column, expr.getContext()) ||
           !expr.isFunctionOfDim(column);
  };
  for (auto [value, map] : reads) {
    Type element = getElementTypeOrSelf(value);
    if (element.isInteger(1) || isa<BFloat16Type, Float16Type>(element))
      return false;
    unsigned column = map.getNumDims() - 1;
    for (auto [i, expr] : llvm::enumerate(map.getResults()))
      if (i + 1 < map.getNumResults() ? expr.isFunctionOfDim(column)
                                      : !alongColumn(expr, column))
        return false;
  }
  return llvm::all_of(accesses, [&](const GroupAccess &access) {
    auto [value, map] = access;
    Operation *op = value.getDefiningOp();
    if (isa<DropoutOp>(op) ||
        isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(value)))
      return false;
    auto iota = dyn_cast<IotaOp>(op);
    return !iota ||
           alongColumn(map.getResult(iota.getDim()), map.getNumDims() - 1);
  });
}

/// The column x and the value v of a row sum over `select(iota == x, v,
/// +0)` along the column (the last of the maps' dims), x the same along
/// it: a one-hot pick (the cross-entropy's label logit, its gradient's
/// one-hot), which is v at column x (+0 when x is outside the row),
/// the same bits as the sum of zeros and it.
std::optional<std::pair<GroupAccess, GroupAccess>>
matchOneHotPick(Value root, AffineMap map) {
  auto select = root.getDefiningOp<SelectOp>();
  auto zero =
      select ? select.getOnFalse().getDefiningOp<ConstantOp>() : ConstantOp();
  auto zeros = zero ? dyn_cast<DenseFPElementsAttr>(zero.getValue())
                    : DenseFPElementsAttr();
  if (!zeros || !zeros.isSplat() || !zeros.getSplatValue<APFloat>().isPosZero())
    return std::nullopt;
  auto compare = select.getCond().getDefiningOp<CompareOp>();
  if (!compare || compare.getPredicate() != ComparisonPredicate::EQ)
    return std::nullopt;
  unsigned column = map.getNumDims() - 1;
  AffineMap condMap = groupOperandMap(select, map, compare.getResult());
  for (auto [iotaSide, other] :
       {std::pair(compare.getLhs(), compare.getRhs()),
        std::pair(compare.getRhs(), compare.getLhs())}) {
    auto iota = iotaSide.getDefiningOp<IotaOp>();
    if (!iota || !isa<IntegerType>(getElementTypeOrSelf(other)))
      continue;
    AffineMap iotaMap = groupOperandMap(compare, condMap, iotaSide);
    AffineMap otherMap = groupOperandMap(compare, condMap, other);
    if (iotaMap.getResult(iota.getDim()) !=
            getAffineDimExpr(column, map.getContext()) ||
        llvm::any_of(otherMap.getResults(), [&](AffineExpr expr) {
          return expr.isFunctionOfDim(column);
        }))
      continue;
    return std::pair(
        GroupAccess{other, otherMap},
        GroupAccess{select.getOnTrue(),
                    groupOperandMap(select, map, select.getOnTrue())});
  }
  return std::nullopt;
}

/// A row_reduction group's kernel: one loop over its rows (the leading
/// dimensions its reductions keep), and in each row, each reduction in
/// program order folds its row of the values feeding it (reading the
/// results of earlier ones, which are written to their buffers first), then
/// every other result's row is written. Each row stays in cache between
/// its passes, and no intermediate is stored but in a result's own buffer
/// (below).
LogicalResult emitRowKernel(OpBuilder &b, Location loc, FusionOp fusion,
                            ValueRange inputs, ValueRange outs,
                            llvm::DenseMap<Value, Value> &hoisted,
                            Operation *&failedOp, int64_t &rowCount,
                            int64_t &work) {
  Block &body = fusion.getBody().front();
  Operation *yield = body.getTerminator();
  // Where each value read lives: an input's buffer, or a result's.
  llvm::DenseMap<Value, Value> buffers;
  for (BlockArgument arg : body.getArguments())
    buffers[arg] = inputs[arg.getArgNumber()];
  for (auto [i, value] : llvm::enumerate(yield->getOperands()))
    buffers.try_emplace(value, outs[i]);
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  FailureOr<RowGroupPlan> plan = planRowGroup(fusion);
  if (failed(plan))
    return failure();
  ArrayRef<int64_t> rows = plan->rows;
  struct Pass {
    Value root;
    Operation *reduce = nullptr;
    llvm::SetVector<Access> accesses, reads;
    /// Whether the row's columns are computed kFoldLanes at a time.
    bool laneWise = false;
    /// A reduction's: the buffer it also writes the values it folds to.
    Value keepIn;
    /// A sum's one-hot pick (matchOneHotPick): the column and the value.
    std::optional<std::pair<Access, Access>> pick;
  };
  SmallVector<Pass> passes;
  for (auto [root, reduce] : plan->passes)
    passes.push_back({root, reduce, {}, {}});
  auto identityOf = [&](Value v) {
    return AffineMap::getMultiDimIdentityMap(
        cast<RankedTensorType>(v.getType()).getRank(), b.getContext());
  };
  rowCount = 1;
  for (int64_t size : rows)
    rowCount *= size;
  work = 0;
  for (Pass &pass : passes) {
    work += cast<RankedTensorType>(pass.root.getType()).getNumElements();
    collectGroupAccesses({pass.root, identityOf(pass.root)}, pass.accesses,
                         pass.reads);
    hoistScalars(b, loc, pass.accesses, inputs, hoisted);
    if (isa_and_nonnull<ReduceSumOp, ReduceMeanOp>(pass.reduce) &&
        shapeOf(pass.root).size() == rows.size() + 1)
      pass.pick = matchOneHotPick(pass.root, identityOf(pass.root));
  }
  // A result that reads, at its own element, what an earlier reduction
  // folds (a softmax's division reads the exponentials its sum folded)
  // reads it from the result's own buffer, where the reduction wrote it as
  // it folded: each element is computed once, then divided in place.
  for (auto [index, result] : llvm::enumerate(passes)) {
    if (result.reduce)
      continue;
    for (Pass &folded :
         llvm::reverse(MutableArrayRef(passes).take_front(index))) {
      Access whole{folded.root, identityOf(folded.root)};
      if (!folded.reduce || folded.keepIn || folded.pick ||
          buffers.count(folded.root) ||
          folded.root.getType() != result.root.getType() ||
          !result.accesses.contains(whole))
        continue;
      llvm::DenseSet<Value> stored{folded.root};
      llvm::SetVector<Access> accesses, reads;
      collectGroupAccesses({result.root, identityOf(result.root)}, accesses,
                           reads, &stored);
      // (Read elsewhere in the row, it would be overwritten by then.)
      if (llvm::any_of(reads, [&](const Access &read) {
            return read.first == folded.root && read != whole;
          }))
        continue;
      result.accesses = std::move(accesses);
      result.reads = std::move(reads);
      folded.keepIn = buffers[folded.root] = buffers.lookup(result.root);
      break;
    }
  }
  for (Pass &pass : passes) {
    // (A reduction of fewer columns than two lanes' worth folds them in one
    // chain, as emitLaneFold does: the same bits either way.)
    ArrayRef<int64_t> shape = shapeOf(pass.root);
    pass.laneWise =
        shape.size() == rows.size() + 1 &&
        shape.back() >= (pass.reduce ? 2 * kFoldLanes : kFoldLanes) &&
        isLaneWise(pass.accesses, pass.reads);
  }
  emitFor(
      b, loc, 0, rowCount, 1, {}, [&](Value row, ValueRange) {
        OpBuilder &nested = b;
        // The row's index along each kept dimension.
        SmallVector<Value> at(rows.size());
        Value rest = row;
        for (int64_t d = static_cast<int64_t>(rows.size()) - 1; d >= 0; --d) {
          Value size = arith::ConstantIndexOp::create(nested, loc, rows[d]);
          at[d] = d ? arith::RemUIOp::create(nested, loc, rest, size) : rest;
          rest = arith::DivUIOp::create(nested, loc, rest, size);
        }
        for (Pass &pass : passes) {
          // The value of pass.root at `indexes`.
          auto rowIndexes = [&](Value column) {
            SmallVector<Value> indexes(at);
            indexes.push_back(column);
            return indexes;
          };
          // `target` (pass.root unless given) at `indexes`; with `lanes`, at
          // the kFoldLanes columns from the last index (a laneWise pass): a
          // buffer read along the columns is one vector load, one read the
          // same for all of them a broadcast scalar.
          auto computeAt = [&](OpBuilder &inner, ValueRange indexes,
                               int64_t lanes, std::optional<Access> target) {
            ScalarEmitter e{inner, loc, lanes};
            llvm::SetVector<Access> targetAccesses, targetReads;
            if (target)
              collectGroupAccesses(*target, targetAccesses, targetReads);
            const llvm::SetVector<Access> &accesses =
                target ? targetAccesses : pass.accesses;
            const llvm::SetVector<Access> &reads =
                target ? targetReads : pass.reads;
            llvm::DenseMap<Access, Value> values;
            for (auto [value, map] : reads) {
              Value buffer = buffers.lookup(value);
              SmallVector<Value> index = applyMap(inner, loc, map, indexes);
              bool alongColumns =
                  map.getNumResults() &&
                  map.getResults().back().isFunctionOfDim(map.getNumDims() - 1);
              Type type = e.shaped(getElementTypeOrSelf(value));
              values[{value, map}] =
                  !lanes
                      ? Value(memref::LoadOp::create(inner, loc, buffer, index))
                  : alongColumns
                      ? Value(vector::LoadOp::create(inner, loc, type, buffer,
                                                     index))
                      : Value(vector::BroadcastOp::create(
                            inner, loc, type,
                            memref::LoadOp::create(inner, loc, buffer, index)));
            }
            auto indexesAt = [&](AffineMap map) {
              return applyMap(inner, loc, map, indexes);
            };
            computeAccesses(e, accesses, values, hoisted, inputs, indexesAt,
                            failedOp);
            return values.lookup(
                target.value_or(Access{pass.root, identityOf(pass.root)}));
          };
          auto valueAt = [&](OpBuilder &inner, ValueRange indexes,
                             std::optional<Access> target = std::nullopt) {
            return computeAt(inner, indexes, 0, target);
          };
          auto lanesAt = [&](OpBuilder &inner, Value column) {
            return computeAt(inner, rowIndexes(column), kFoldLanes,
                             std::nullopt);
          };
          ArrayRef<int64_t> inner = shapeOf(pass.root).drop_front(rows.size());
          // (laneWise: the columns of whole lanes, then the rest one by one.)
          int64_t whole =
              inner.empty() ? 0 : inner.back() / kFoldLanes * kFoldLanes;
          if (!pass.reduce && pass.laneWise) {
            Value out = buffers.lookup(pass.root);
            emitFor(nested, loc, 0, whole, kFoldLanes, {},
                    [&](Value column, ValueRange) {
                      vector::StoreOp::create(nested, loc,
                                              lanesAt(nested, column), out,
                                              rowIndexes(column));
                      return SmallVector<Value>();
                    });
            emitFor(nested, loc, whole, inner.back(), 1, {},
                    [&](Value column, ValueRange) {
                      SmallVector<Value> indexes = rowIndexes(column);
                      memref::StoreOp::create(
                          nested, loc, valueAt(nested, indexes), out, indexes);
                      return SmallVector<Value>();
                    });
            continue;
          }
          if (!pass.reduce) {
            forEachIndex(nested, loc, inner, at, {},
                         [&](OpBuilder &in, ValueRange indexes, ValueRange) {
                           memref::StoreOp::create(
                               in, loc, valueAt(in, indexes),
                               buffers.lookup(pass.root), indexes);
                           return SmallVector<Value>();
                         });
            continue;
          }
          Operation *reduce = pass.reduce;
          Type element = getElementTypeOrSelf(reduce->getResult(0).getType());
          double inf = std::numeric_limits<double>::infinity();
          double identity = isa<ReduceMaxOp>(reduce)   ? -inf
                            : isa<ReduceMinOp>(reduce) ? inf
                                                       : 0.0;
          ScalarEmitter e{nested, loc};
          Value init = e.constant(identity, element);
          auto fold = [&](OpBuilder &in, Value acc, Value x) -> Value {
            if (x.getType() != acc.getType())
              x = arith::ExtFOp::create(in, loc, acc.getType(), x);
            if (isa<ReduceMaxOp>(reduce))
              return emitMax(in, loc, acc, x);
            if (isa<ReduceMinOp>(reduce))
              return emitMin(in, loc, acc, x);
            return arith::AddFOp::create(in, loc, acc, x);
          };
          auto foldAt = [&](ValueRange r, Value acc) {
            SmallVector<Value> indexes(at);
            indexes.append(r.begin(), r.end());
            Value x = valueAt(nested, indexes);
            if (pass.keepIn)
              memref::StoreOp::create(nested, loc, x, pass.keepIn, indexes);
            return fold(nested, acc, x);
          };
          auto combine = [&](Value x, Value y) { return fold(nested, x, y); };
          Value total;
          if (pass.pick) {
            // v at column x, the column clamped into the row (then unused).
            auto [column, value] = *pass.pick;
            ScalarEmitter e{nested, loc};
            SmallVector<Value> indexes =
                rowIndexes(arith::ConstantIndexOp::create(nested, loc, 0));
            Value x =
                *e.cast(valueAt(nested, indexes, column), nested.getI64Type());
            Value inRow =
                arith::CmpIOp::create(nested, loc, arith::CmpIPredicate::ult, x,
                                      e.constant(inner.back(), x.getType()));
            x = arith::SelectOp::create(nested, loc, inRow, x,
                                        e.constant(0, x.getType()));
            indexes.back() = arith::IndexCastOp::create(
                nested, loc, nested.getIndexType(), x);
            total = arith::SelectOp::create(
                nested, loc, inRow,
                fold(nested, init, valueAt(nested, indexes, value)), init);
          } else if (pass.laneWise) {
            // emitLaneFold's lanes as the lanes of one vector: lane l folds
            // columns l, l + kFoldLanes, ..., the rest fold into lane 0, and
            // the lanes combine pairwise (the same bits).
            ScalarEmitter lanes{nested, loc, kFoldLanes};
            Value folded =
                emitFor(nested, loc, 0, whole, kFoldLanes,
                        {lanes.constant(identity, element)},
                        [&](Value column, ValueRange carried) {
                          Value x = lanesAt(nested, column);
                          if (pass.keepIn)
                            vector::StoreOp::create(nested, loc, x, pass.keepIn,
                                                    rowIndexes(column));
                          return SmallVector<Value>{
                              fold(nested, carried.front(), x)};
                        })
                    .front();
            SmallVector<Value> partial;
            for (int64_t l = 0; l < kFoldLanes; ++l)
              partial.push_back(
                  vector::ExtractOp::create(nested, loc, folded, l));
            partial.front() =
                emitFor(nested, loc, whole, inner.back(), 1, {partial.front()},
                        [&](Value column, ValueRange carried) {
                          return SmallVector<Value>{
                              foldAt(column, carried.front())};
                        })
                    .front();
            for (int64_t width = kFoldLanes; width > 1; width /= 2)
              for (int64_t l = 0; l < width / 2; ++l)
                partial[l] = combine(partial[2 * l], partial[2 * l + 1]);
            total = partial.front();
          } else {
            total = emitFoldOver(nested, loc, inner, init, foldAt, combine);
          }
          if (isa<ReduceMeanOp>(reduce)) {
            int64_t count = 1;
            for (int64_t size : inner)
              count *= size;
            total = e.div(total, e.constant(count, element));
          }
          // (keep_dims: zeros for the folded dimensions.)
          SmallVector<Value> index(at);
          while (index.size() < shapeOf(reduce->getResult(0)).size())
            index.push_back(arith::ConstantIndexOp::create(nested, loc, 0));
          memref::StoreOp::create(nested, loc, total,
                                  buffers.lookup(reduce->getResult(0)), index);
        }
        return SmallVector<Value>();
      });
  return success();
}

} // namespace

FailureOr<func::FuncOp>
mlir::dtc::buildLoopKernel(FusionOp fusion, ModuleOp kernels, StringRef name) {
  Block &groupBody = fusion.getBody().front();
  bool rowKernel = fusion.getKind() == FusionKind::RowReduction;
  auto memrefOf = [](Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  };
  SmallVector<Type> argTypes;
  for (Type type : fusion.getInputs().getTypes())
    argTypes.push_back(memrefOf(type));
  for (Type type : fusion.getResultTypes())
    argTypes.push_back(memrefOf(type));
  OpBuilder b = OpBuilder::atBlockEnd(kernels.getBody());
  Location loc = fusion.getLoc();
  auto func =
      func::FuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  // Each nest's outermost dimension is parallel (a row kernel's rows):
  // threads can share it, a scalar result (an optimizer's step count) left
  // to part 0. A reduction to a scalar runs whole.
  int64_t rows = 0, work = 0;
  SmallVector<Value> roots(groupBody.getTerminator()->getOperands());
  Value firstPart; // (i1: this is part 0)
  if (!rowKernel) {
    for (Value root : roots) {
      auto type = cast<RankedTensorType>(root.getType());
      work += type.getNumElements();
      if (type.getRank() > 0)
        rows = std::max(rows, type.getDimSize(0));
    }
    if (rows > 1) {
      addKernelParts(func, rows, work);
      Value part = entry->getArgument(entry->getNumArguments() - 2);
      firstPart =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, part,
                                arith::ConstantIndexOp::create(b, loc, 0));
    }
  }
  unsigned numInputs = fusion.getInputs().size();
  ValueRange inputs = entry->getArguments().take_front(numInputs);
  ValueRange outs =
      entry->getArguments().slice(numInputs, fusion.getNumResults());
  Operation *failedOp = nullptr;
  llvm::DenseMap<Value, Value> hoisted;
  if (rowKernel) {
    if (failed(emitRowKernel(b, loc, fusion, inputs, outs, hoisted, failedOp,
                             rows, work))) {
      func.erase();
      return failure();
    }
  } else {
    for (ArrayRef<unsigned> nest : groupNests(roots)) {
      SmallVector<Value> nestRoots, nestOuts;
      for (unsigned i : nest) {
        nestRoots.push_back(roots[i]);
        nestOuts.push_back(outs[i]);
      }
      if (!firstPart ||
          cast<RankedTensorType>(nestRoots.front().getType()).getRank()) {
        emitLoopNest(b, loc, nestRoots, nestOuts, inputs, hoisted, failedOp);
        continue;
      }
      auto ifFirst = scf::IfOp::create(b, loc, firstPart);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      // (Scalars hoisted inside it are for it alone.)
      llvm::DenseMap<Value, Value> own;
      emitLoopNest(b, loc, nestRoots, nestOuts, inputs, own, failedOp);
    }
  }
  func::ReturnOp::create(b, loc);
  if (failedOp) {
    func.erase();
    return failedOp->emitError("a loop kernel does not compute '")
           << failedOp->getName() << "' yet";
  }
  if (rowKernel && rows > 1)
    addKernelParts(func, rows, work);
  return func;
}

//===- ElementwiseKernels.cpp - reference kernels: elementwise ops --------===//
//
// Constants, iota, unary and broadcasting binary ops, compare, select, cast.
// Float kernels compute in f64 (the caller rounds to the element type);
// integer kernels compute in i64 (the caller wraps to the element width).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"
#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/Philox.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// Applies `fn` elementwise to a float tensor.
template <typename Fn>
LogicalResult unaryFloat(Operation *op, Operands in, Results &out, Fn fn) {
  Tensor result = makeTensor(op->getResult(0));
  for (int64_t i = 0, e = result.numElements(); i < e; ++i)
    result.floats()[i] = fn(in[0]->floats()[i]);
  out.push_back(std::move(result));
  return success();
}

/// Applies the generic `fn` elementwise to a float or integer tensor.
template <typename Fn>
LogicalResult unaryNumeric(Operation *op, Operands in, Results &out, Fn fn) {
  Tensor result = makeTensor(op->getResult(0));
  for (int64_t i = 0, e = result.numElements(); i < e; ++i) {
    if (result.isFloat())
      result.floats()[i] = fn(in[0]->floats()[i]);
    else
      result.ints()[i] = fn(in[0]->ints()[i]);
  }
  out.push_back(std::move(result));
  return success();
}

/// Applies the generic `fn(lhs, rhs)` with numpy broadcasting; the result is
/// float or integer as the result tensor is.
template <typename Fn>
LogicalResult binary(Operation *op, Operands in, Results &out, Fn fn) {
  Tensor result = makeTensor(op->getResult(0));
  std::vector<int64_t> lhs = broadcastOffsets(in[0]->shape(), result.shape());
  std::vector<int64_t> rhs = broadcastOffsets(in[1]->shape(), result.shape());
  for (int64_t i = 0, e = result.numElements(); i < e; ++i) {
    if (in[0]->isFloat()) {
      double value = fn(in[0]->floats()[lhs[i]], in[1]->floats()[rhs[i]]);
      if (result.isFloat())
        result.floats()[i] = value;
      else
        result.ints()[i] = static_cast<int64_t>(value);
    } else {
      result.ints()[i] = fn(in[0]->ints()[lhs[i]], in[1]->ints()[rhs[i]]);
    }
  }
  out.push_back(std::move(result));
  return success();
}

template <typename T> T maxPropagatingNaN(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b))
      return NAN;
  return a < b ? b : a;
}

template <typename T> T minPropagatingNaN(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) || std::isnan(b))
      return NAN;
  return b < a ? b : a;
}

template <typename T>
bool comparePredicate(ComparisonPredicate predicate, T a, T b) {
  switch (predicate) {
  case ComparisonPredicate::EQ:
    return a == b;
  case ComparisonPredicate::NE:
    return a != b;
  case ComparisonPredicate::LT:
    return a < b;
  case ComparisonPredicate::LE:
    return a <= b;
  case ComparisonPredicate::GT:
    return a > b;
  case ComparisonPredicate::GE:
    return a >= b;
  }
  return false;
}

double geluExact(double x) { return 0.5 * x * (1.0 + std::erf(x / M_SQRT2)); }

double geluTanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Float-to-integer conversion: truncation toward zero, NaN to 0 and
/// saturation at the i64 range (the dialect leaves these unspecified).
int64_t floatToInt(double value) {
  if (std::isnan(value))
    return 0;
  if (value >= 9.2233720368547758e18)
    return INT64_MAX;
  if (value <= -9.2233720368547758e18)
    return INT64_MIN;
  return static_cast<int64_t>(value);
}

} // namespace

void mlir::dtc::addElementwiseKernels(KernelTable &table) {
  table.add<DropoutOp>([](DropoutOp op, Operands in,
                          Results &out) -> LogicalResult {
    Tensor result = makeTensor(op.getResult());
    double ratio = op.getRatio().convertToDouble();
    uint64_t step = static_cast<uint64_t>(in[1]->ints()[0]);
    // A part of a larger tensor draws by the element's index in the whole.
    const Shape &local = result.shape();
    Shape whole = local;
    std::vector<int64_t> offset(local.size(), 0);
    if (auto global = op.getGlobalShape()) {
      whole.assign(global->begin(), global->end());
      for (size_t d = 0; d < offset.size(); ++d)
        offset[d] = in[2]->ints()[d];
    }
    for (int64_t i = 0, e = result.numElements(); i < e; ++i) {
      int64_t global = 0;
      for (int64_t d = 0, rest = i, stride = e; d < result.rank(); ++d) {
        stride /= local[d];
        global = global * whole[d] + rest / stride + offset[d];
        rest %= stride;
      }
      double uniform =
          dropoutUniform(global, step, op.getSeed(), op.getStream());
      result.floats()[i] =
          uniform >= ratio ? in[0]->floats()[i] / (1.0 - ratio) : 0.0;
    }
    out.push_back(std::move(result));
    return success();
  });
  table.add<ConstantOp>(
      [](ConstantOp op, Operands, Results &out) -> LogicalResult {
        FailureOr<Tensor> value = tensorFromAttr(op.getValue());
        if (failed(value))
          return op.emitError("cannot decode the constant's value");
        out.push_back(std::move(*value));
        return success();
      });
  table.add<IotaOp>([](IotaOp op, Operands, Results &out) -> LogicalResult {
    Tensor result = makeTensor(op.getResult());
    DimSplit split = splitAt(result.shape(), op.getDim());
    for (int64_t i = 0, e = result.numElements(); i < e; ++i) {
      int64_t index = (i / split.inner) % split.size;
      if (result.isFloat())
        result.floats()[i] = index;
      else
        result.ints()[i] = index;
    }
    out.push_back(std::move(result));
    return success();
  });

  // Unary float ops.
  table.add<ExpOp>([](ExpOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return std::exp(x); });
  });
  table.add<LogOp>([](LogOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return std::log(x); });
  });
  table.add<SqrtOp>([](SqrtOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return std::sqrt(x); });
  });
  table.add<RsqrtOp>([](RsqrtOp op, Operands in,
                        Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return 1.0 / std::sqrt(x); });
  });
  table.add<ReciprocalOp>(
      [](ReciprocalOp op, Operands in, Results &out) -> LogicalResult {
        return unaryFloat(op, in, out, [](double x) { return 1.0 / x; });
      });
  table.add<TanhOp>([](TanhOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return std::tanh(x); });
  });
  table.add<ErfOp>([](ErfOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return std::erf(x); });
  });
  table.add<SinOp>([](SinOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return std::sin(x); });
  });
  table.add<CosOp>([](CosOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return std::cos(x); });
  });
  table.add<SigmoidOp>(
      [](SigmoidOp op, Operands in, Results &out) -> LogicalResult {
        return unaryFloat(op, in, out, sigmoid);
      });
  table.add<SiluOp>([](SiluOp op, Operands in, Results &out) -> LogicalResult {
    return unaryFloat(op, in, out, [](double x) { return x * sigmoid(x); });
  });
  table.add<SoftplusOp>(
      [](SoftplusOp op, Operands in, Results &out) -> LogicalResult {
        // log1p(e^-|x|) + max(x, 0) does not overflow for large |x|.
        return unaryFloat(op, in, out, [](double x) {
          return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
        });
      });
  table.add<GeluOp>([](GeluOp op, Operands in, Results &out) -> LogicalResult {
    if (op.getApproximate() == GeluApproximation::Tanh)
      return unaryFloat(op, in, out, geluTanh);
    return unaryFloat(op, in, out, geluExact);
  });

  // Unary numeric ops.
  table.add<NegOp>([](NegOp op, Operands in, Results &out) -> LogicalResult {
    return unaryNumeric(op, in, out, [](auto x) { return -x; });
  });
  table.add<AbsOp>([](AbsOp op, Operands in, Results &out) -> LogicalResult {
    return unaryNumeric(op, in, out, [](auto x) { return x < 0 ? -x : x; });
  });
  table.add<ReluOp>([](ReluOp op, Operands in, Results &out) -> LogicalResult {
    return unaryNumeric(op, in, out,
                        [](auto x) { return x > 0 ? x : decltype(x)(0); });
  });
  table.add<NotOp>([](NotOp op, Operands in, Results &out) -> LogicalResult {
    return unaryNumeric(op, in, out, [](auto x) { return !x; });
  });

  // Broadcasting binary ops.
  table.add<AddOp>([](AddOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out, [](auto a, auto b) { return a + b; });
  });
  table.add<SubOp>([](SubOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out, [](auto a, auto b) { return a - b; });
  });
  table.add<MulOp>([](MulOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out, [](auto a, auto b) { return a * b; });
  });
  table.add<DivOp>([](DivOp op, Operands in, Results &out) -> LogicalResult {
    if (!in[1]->isFloat())
      for (int64_t divisor : in[1]->ints())
        if (divisor == 0)
          return op.emitError("integer division by zero");
    return binary(op, in, out, [](auto a, auto b) { return a / b; });
  });
  table.add<ModOp>([](ModOp op, Operands in, Results &out) -> LogicalResult {
    if (!in[1]->isFloat())
      for (int64_t divisor : in[1]->ints())
        if (divisor == 0)
          return op.emitError("integer remainder by zero");
    bool truncated = op.getTruncated();
    return binary(op, in, out, [truncated](auto a, auto b) {
      decltype(a) r;
      if constexpr (std::is_floating_point_v<decltype(a)>)
        r = std::fmod(a, b);
      else
        r = a % b;
      // Floored: a nonzero remainder takes the divisor's sign.
      if (!truncated && r != 0 && (r < 0) != (b < 0))
        r += b;
      return r;
    });
  });
  table.add<PowOp>([](PowOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out, [](auto a, auto b) {
      return static_cast<decltype(a)>(
          std::pow(static_cast<double>(a), static_cast<double>(b)));
    });
  });
  table.add<MaxOp>([](MaxOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out,
                  [](auto a, auto b) { return maxPropagatingNaN(a, b); });
  });
  table.add<MinOp>([](MinOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out,
                  [](auto a, auto b) { return minPropagatingNaN(a, b); });
  });
  table.add<AndOp>([](AndOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out,
                  [](auto a, auto b) -> decltype(a) { return a && b; });
  });
  table.add<OrOp>([](OrOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out,
                  [](auto a, auto b) -> decltype(a) { return a || b; });
  });
  table.add<XorOp>([](XorOp op, Operands in, Results &out) -> LogicalResult {
    return binary(op, in, out,
                  [](auto a, auto b) -> decltype(a) { return !a != !b; });
  });
  table.add<CompareOp>(
      [](CompareOp op, Operands in, Results &out) -> LogicalResult {
        ComparisonPredicate predicate = op.getPredicate();
        return binary(op, in, out, [predicate](auto a, auto b) -> decltype(a) {
          return comparePredicate(predicate, a, b);
        });
      });

  table.add<SelectOp>(
      [](SelectOp op, Operands in, Results &out) -> LogicalResult {
        Tensor result = makeTensor(op.getResult());
        const Shape &shape = result.shape();
        std::vector<int64_t> cond = broadcastOffsets(in[0]->shape(), shape);
        std::vector<int64_t> onTrue = broadcastOffsets(in[1]->shape(), shape);
        std::vector<int64_t> onFalse = broadcastOffsets(in[2]->shape(), shape);
        for (int64_t i = 0, e = result.numElements(); i < e; ++i) {
          bool pick = in[0]->ints()[cond[i]] != 0;
          const Tensor &source = pick ? *in[1] : *in[2];
          int64_t offset = pick ? onTrue[i] : onFalse[i];
          if (result.isFloat())
            result.floats()[i] = source.floats()[offset];
          else
            result.ints()[i] = source.ints()[offset];
        }
        out.push_back(std::move(result));
        return success();
      });

  table.add<CastOp>([](CastOp op, Operands in, Results &out) -> LogicalResult {
    Tensor result = makeTensor(op.getResult());
    const Tensor &input = *in[0];
    for (int64_t i = 0, e = result.numElements(); i < e; ++i) {
      if (result.isFloat())
        result.floats()[i] = input.at(i);
      else if (input.isFloat() && result.dtype() == DType::Bool)
        result.ints()[i] = input.floats()[i] != 0.0;
      else if (input.isFloat())
        result.ints()[i] = floatToInt(input.floats()[i]);
      else
        result.ints()[i] = input.ints()[i];
    }
    out.push_back(std::move(result));
    return success();
  });
}

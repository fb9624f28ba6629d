//===- ReductionKernels.cpp - reference kernels: reductions ---------------===//
//
// Reductions, softmax, normalizations and matmul (a contraction). Float
// accumulation is in f64; the caller rounds results to the element type.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

enum class ReduceKind { Sum, Mean, Max, Min };

template <typename OpTy>
LogicalResult reduce(OpTy op, Operands in, Results &out, ReduceKind kind) {
  const Tensor &input = *in[0];
  Tensor result = makeTensor(op.getResult());
  // Broadcasting the reduced shape (reduced dimensions kept as 1) back over
  // the input maps every input element to the slot it reduces into.
  Shape kept = input.shape();
  int64_t count = 1;
  for (int64_t dim : op.getDims()) {
    count *= kept[dim];
    kept[dim] = 1;
  }
  std::vector<int64_t> target = broadcastOffsets(kept, input.shape());
  // Over nothing, max and min are their identities (ONNX, opset 18): -inf
  // and +inf, or the integer type's least and greatest values.
  int64_t intIdentity = kind == ReduceKind::Max   ? INT64_MIN
                        : kind == ReduceKind::Min ? INT64_MAX
                                                  : 0;
  if (auto integer = dyn_cast<IntegerType>(
          op.getResult().getType().getElementType());
      integer && integer.getWidth() < 64 && kind != ReduceKind::Sum &&
      kind != ReduceKind::Mean) {
    unsigned width = integer.getWidth();
    bool isUnsigned = integer.isUnsigned() || width == 1;
    APInt bound = kind == ReduceKind::Max
                      ? (isUnsigned ? APInt::getMinValue(width)
                                    : APInt::getSignedMinValue(width))
                      : (isUnsigned ? APInt::getMaxValue(width)
                                    : APInt::getSignedMaxValue(width));
    intIdentity = isUnsigned ? static_cast<int64_t>(bound.getZExtValue())
                             : bound.getSExtValue();
  }

  std::vector<double> acc(
      result.numElements(),
      kind == ReduceKind::Max   ? -std::numeric_limits<double>::infinity()
      : kind == ReduceKind::Min ? std::numeric_limits<double>::infinity()
                                : 0.0);
  std::vector<int64_t> intAcc(result.numElements(), intIdentity);
  for (int64_t i = 0, e = input.numElements(); i < e; ++i) {
    int64_t t = target[i];
    if (input.isFloat()) {
      double x = input.floats()[i];
      if (kind == ReduceKind::Sum || kind == ReduceKind::Mean)
        acc[t] += x;
      else if (std::isnan(x) || std::isnan(acc[t]))
        acc[t] = NAN; // max/min propagate NaN
      else
        acc[t] =
            kind == ReduceKind::Max ? std::max(acc[t], x) : std::min(acc[t], x);
    } else {
      int64_t x = input.ints()[i];
      if (kind == ReduceKind::Max)
        intAcc[t] = std::max(intAcc[t], x);
      else if (kind == ReduceKind::Min)
        intAcc[t] = std::min(intAcc[t], x);
      else
        intAcc[t] += x;
    }
  }
  for (int64_t i = 0, e = result.numElements(); i < e; ++i) {
    if (result.isFloat())
      result.floats()[i] = kind == ReduceKind::Mean ? acc[i] / count : acc[i];
    else
      result.ints()[i] =
          kind == ReduceKind::Mean ? intAcc[i] / count : intAcc[i];
  }
  out.push_back(std::move(result));
  return success();
}

/// Softmax (or log-softmax) along `dim`, subtracting the maximum first.
LogicalResult softmax(Operation *op, Operands in, Results &out, int64_t dim,
                      bool logarithm) {
  const Tensor &input = *in[0];
  Tensor result = makeTensor(op->getResult(0));
  DimSplit split = splitAt(input.shape(), dim);
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t k = 0; k < split.inner; ++k) {
      int64_t base = o * split.size * split.inner + k;
      auto at = [&](int64_t j) { return base + j * split.inner; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < split.size; ++j)
        max = std::max(max, input.floats()[at(j)]);
      double sum = 0;
      for (int64_t j = 0; j < split.size; ++j)
        sum += std::exp(input.floats()[at(j)] - max);
      for (int64_t j = 0; j < split.size; ++j) {
        double shifted = input.floats()[at(j)] - max;
        result.floats()[at(j)] =
            logarithm ? shifted - std::log(sum) : std::exp(shifted) / sum;
      }
    }
  }
  out.push_back(std::move(result));
  return success();
}

/// Layer norm (`withMean`) or RMS norm over the trailing dimensions from
/// `dim`; appends the result and, for layer norm, mean and 1/stddev.
void normalize(Operation *op, Operands in, Results &out, int64_t dim,
               double epsilon, bool withMean) {
  const Tensor &input = *in[0];
  const Tensor &scale = *in[1];
  const Tensor *bias = in.size() > 2 ? in[2] : nullptr;
  Tensor result = makeTensor(op->getResult(0));
  int64_t rows = splitAt(input.shape(), dim).outer;
  int64_t width = input.numElements() / std::max<int64_t>(rows, 1);
  Tensor mean(result.dtype(), Shape{rows}), rstd(result.dtype(), Shape{rows});
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = input.floats().data() + r * width;
    double mu = 0;
    if (withMean) {
      for (int64_t j = 0; j < width; ++j)
        mu += x[j];
      mu /= width;
    }
    double var = 0;
    for (int64_t j = 0; j < width; ++j)
      var += (x[j] - mu) * (x[j] - mu);
    var /= width;
    double inv = 1.0 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < width; ++j) {
      double y = (x[j] - mu) * inv * scale.floats()[j];
      result.floats()[r * width + j] = bias ? y + bias->floats()[j] : y;
    }
    mean.floats()[r] = mu;
    rstd.floats()[r] = inv;
  }
  out.push_back(std::move(result));
  if (withMean) {
    for (Tensor *stat : {&mean, &rstd}) {
      Tensor shaped = makeTensor(op->getResult(out.size()));
      shaped.floats() = stat->floats();
      out.push_back(std::move(shaped));
    }
  }
}

LogicalResult matmul(MatmulOp op, Operands in, Results &out) {
  const Tensor &lhs = *in[0], &rhs = *in[1];
  Tensor result = makeTensor(op.getResult());
  const Shape &ls = lhs.shape(), &rs = rhs.shape(), &os = result.shape();
  int64_t m = os[os.size() - 2], n = os.back();
  int64_t k = op.getTransposeLhs() ? ls[ls.size() - 2] : ls.back();
  Shape batch(os.begin(), os.end() - 2);
  std::vector<int64_t> lhsBatch =
      broadcastOffsets(Shape(ls.begin(), ls.end() - 2), batch);
  std::vector<int64_t> rhsBatch =
      broadcastOffsets(Shape(rs.begin(), rs.end() - 2), batch);
  // Element (i, p) of the lhs matrix is at i * lhsStrideI + p * lhsStrideP,
  // element (p, j) of the rhs matrix at p * rhsStrideP + j * rhsStrideJ.
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  int64_t lhsStrideI = tl ? 1 : k, lhsStrideP = tl ? m : 1;
  int64_t rhsStrideP = tr ? 1 : n, rhsStrideJ = tr ? k : 1;
  bool isFloat = result.isFloat();
  for (size_t b = 0; b < lhsBatch.size(); ++b) {
    int64_t lbase = lhsBatch[b] * m * k, rbase = rhsBatch[b] * k * n;
    int64_t obase = static_cast<int64_t>(b) * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double facc = 0;
        int64_t iacc = 0;
        for (int64_t p = 0; p < k; ++p) {
          int64_t l = lbase + i * lhsStrideI + p * lhsStrideP;
          int64_t r = rbase + p * rhsStrideP + j * rhsStrideJ;
          if (isFloat)
            facc += lhs.floats()[l] * rhs.floats()[r];
          else
            iacc += lhs.ints()[l] * rhs.ints()[r];
        }
        if (isFloat)
          result.floats()[obase + i * n + j] = facc;
        else
          result.ints()[obase + i * n + j] = iacc;
      }
    }
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult argMax(ArgMaxOp op, Operands in, Results &out) {
  const Tensor &input = *in[0];
  Tensor result = makeTensor(op.getResult());
  DimSplit split = splitAt(input.shape(), op.getDim());
  if (split.size == 0 && result.numElements() > 0)
    return op.emitError("arg_max over an empty dimension");
  bool last = op.getSelectLastIndex();
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t k = 0; k < split.inner; ++k) {
      int64_t best = 0;
      double bestValue = input.at(o * split.size * split.inner + k);
      for (int64_t j = 1; j < split.size; ++j) {
        double x = input.at((o * split.size + j) * split.inner + k);
        bool better = std::isnan(x)
                          ? !std::isnan(bestValue) || last
                          : !std::isnan(bestValue) &&
                                (last ? x >= bestValue : x > bestValue);
        if (better) {
          best = j;
          bestValue = x;
        }
      }
      result.ints()[o * split.inner + k] = best;
    }
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult cumSum(CumSumOp op, Operands in, Results &out) {
  const Tensor &input = *in[0];
  Tensor result = makeTensor(op.getResult());
  DimSplit split = splitAt(input.shape(), op.getDim());
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t k = 0; k < split.inner; ++k) {
      double facc = 0;
      int64_t iacc = 0;
      for (int64_t step = 0; step < split.size; ++step) {
        int64_t j = reverse ? split.size - 1 - step : step;
        int64_t at = (o * split.size + j) * split.inner + k;
        if (!exclusive) {
          facc += input.isFloat() ? input.floats()[at] : 0;
          iacc += input.isFloat() ? 0 : input.ints()[at];
        }
        if (result.isFloat())
          result.floats()[at] = facc;
        else
          result.ints()[at] = iacc;
        if (exclusive) {
          facc += input.isFloat() ? input.floats()[at] : 0;
          iacc += input.isFloat() ? 0 : input.ints()[at];
        }
      }
    }
  }
  out.push_back(std::move(result));
  return success();
}

LogicalResult topK(TopKOp op, Operands in, Results &out) {
  const Tensor &input = *in[0];
  Tensor values = makeTensor(op.getValues()),
         indices = makeTensor(op.getIndices());
  DimSplit split = splitAt(input.shape(), op.getDim());
  int64_t k = op.getK();
  bool smallest = op.getSmallest();
  std::vector<int64_t> order(split.size);
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t i = 0; i < split.inner; ++i) {
      auto at = [&](int64_t j) {
        return input.at((o * split.size + j) * split.inner + i);
      };
      for (int64_t j = 0; j < split.size; ++j)
        order[j] = j;
      // NaN orders above every number (as torch.topk orders it); stable:
      // equal values keep the lower index first.
      auto greater = [](double x, double y) {
        return (std::isnan(x) && !std::isnan(y)) || x > y;
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return smallest ? greater(at(b), at(a)) : greater(at(a), at(b));
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t to = (o * k + j) * split.inner + i;
        int64_t from = (o * split.size + order[j]) * split.inner + i;
        if (values.isFloat())
          values.floats()[to] = input.floats()[from];
        else
          values.ints()[to] = input.ints()[from];
        indices.ints()[to] = order[j];
      }
    }
  }
  out.push_back(std::move(values));
  out.push_back(std::move(indices));
  return success();
}

} // namespace

void mlir::dtc::addReductionKernels(KernelTable &table) {
  table.add<TopKOp>(topK);
  table.add<ArgMaxOp>(argMax);
  table.add<CumSumOp>(cumSum);
  table.add<ReduceSumOp>(
      [](ReduceSumOp op, Operands in, Results &out) -> LogicalResult {
        return reduce(op, in, out, ReduceKind::Sum);
      });
  table.add<ReduceMeanOp>(
      [](ReduceMeanOp op, Operands in, Results &out) -> LogicalResult {
        return reduce(op, in, out, ReduceKind::Mean);
      });
  table.add<ReduceMaxOp>(
      [](ReduceMaxOp op, Operands in, Results &out) -> LogicalResult {
        return reduce(op, in, out, ReduceKind::Max);
      });
  table.add<ReduceMinOp>(
      [](ReduceMinOp op, Operands in, Results &out) -> LogicalResult {
        return reduce(op, in, out, ReduceKind::Min);
      });
  table.add<SoftmaxOp>(
      [](SoftmaxOp op, Operands in, Results &out) -> LogicalResult {
        return softmax(op, in, out, op.getDim(), /*logarithm=*/false);
      });
  table.add<LogSoftmaxOp>(
      [](LogSoftmaxOp op, Operands in, Results &out) -> LogicalResult {
        return softmax(op, in, out, op.getDim(), /*logarithm=*/true);
      });
  table.add<LayerNormOp>(
      [](LayerNormOp op, Operands in, Results &out) -> LogicalResult {
        normalize(op, in, out, op.getDim(), op.getEpsilon().convertToDouble(),
                  /*withMean=*/true);
        return success();
      });
  table.add<RMSNormOp>(
      [](RMSNormOp op, Operands in, Results &out) -> LogicalResult {
        normalize(op, in, out, op.getDim(), op.getEpsilon().convertToDouble(),
                  /*withMean=*/false);
        return success();
      });
  table.add<MatmulOp>(matmul);
}

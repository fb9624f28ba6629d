//===- MathImporters.cpp - ONNX contractions, reductions, normalizations --===//

#include "NodeImporter.h"

#include "llvm/ADT/STLExtras.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// MatMul with numpy semantics: a 1-D lhs is a row vector and a 1-D rhs a
/// column vector, and the added dimension is removed from the result.
LogicalResult importMatMul(NodeImporter &n) {
  Value lhs = n.input(0), rhs = n.input(1);
  ArrayRef<int64_t> ls = n.inputType(0).getShape(),
                    rs = n.inputType(1).getShape();
  if (ls.empty() || rs.empty()) {
    n.error() << "operands must have rank >= 1";
    return failure();
  }
  if (ls.size() == 1)
    lhs = n.reshape(lhs, {1, ls[0]});
  if (rs.size() == 1)
    rhs = n.reshape(rhs, {rs[0], 1});
  FailureOr<Value> product = n.create<MatmulOp>(lhs, rhs, false, false);
  if (failed(product))
    return failure();
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(product->getType()).getShape());
  if (rs.size() == 1)
    shape.pop_back();
  if (ls.size() == 1)
    shape.erase(shape.end() - (rs.size() == 1 ? 1 : 2));
  return n.setResult(n.reshape(*product, shape));
}

/// Y = alpha * A' B' + beta * C, with C broadcast to [M, N].
LogicalResult importGemm(NodeImporter &n) {
  if (n.inputType(0).getRank() != 2 || n.inputType(1).getRank() != 2) {
    n.error() << "A and B must be matrices";
    return failure();
  }
  Type elementType = n.inputType(0).getElementType();
  FailureOr<Value> y =
      n.create<MatmulOp>(n.input(0), n.input(1), n.intAttr("transA", 0) != 0,
                         n.intAttr("transB", 0) != 0);
  if (failed(y))
    return failure();
  float alpha = n.floatAttr("alpha", 1.0f), beta = n.floatAttr("beta", 1.0f);
  if (alpha != 1.0f)
    y = n.create<MulOp>(*y, n.scalar(alpha, elementType));
  if (succeeded(y) && n.hasInput(2)) {
    Value c = n.input(2);
    if (beta != 1.0f) {
      FailureOr<Value> scaled = n.create<MulOp>(c, n.scalar(beta, elementType));
      if (failed(scaled))
        return failure();
      c = *scaled;
    }
    y = n.create<AddOp>(*y, c);
  }
  return n.setResult(y);
}

/// Softmax and LogSoftmax. From opset 13 they normalize along `axis`
/// (default -1); before, the input is viewed as a matrix split at `axis`
/// (default 1) and each row is normalized.
template <typename OpTy> LogicalResult importSoftmax(NodeImporter &n) {
  ArrayRef<int64_t> shape = n.inputType(0).getShape();
  int64_t rank = shape.size();
  bool coerced = n.opset < 13;
  int64_t axis = n.intAttr("axis", coerced ? 1 : -1);
  FailureOr<int64_t> dim = n.normalizeAxis(axis, rank);
  if (failed(dim))
    return failure();
  if (!coerced)
    return n.setResult(n.create<OpTy>(n.input(0), *dim));
  int64_t rows = 1, cols = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < *dim ? rows : cols) *= shape[i];
  Value matrix = n.reshape(n.input(0), {rows, cols});
  FailureOr<Value> normalized = n.create<OpTy>(matrix, int64_t(1));
  if (failed(normalized))
    return failure();
  return n.setResult(n.reshape(*normalized, shape));
}

/// ReduceSum/Mean/Max/Min: axes come from an attribute in older opsets and
/// from the second input in newer ones (ReduceSum from 13, the rest from 18).
template <typename OpTy>
LogicalResult importReduce(NodeImporter &n, int64_t axesInputSince) {
  int64_t rank = n.inputType(0).getRank();
  SmallVector<int64_t> axes;
  if (n.opset >= axesInputSince) {
    if (n.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> fromInput = n.constantInts(1, "axes");
      if (failed(fromInput))
        return failure();
      axes = *fromInput;
    }
  } else if (auto fromAttr = n.intsAttr("axes")) {
    axes = *fromAttr;
  }
  if (axes.empty()) {
    if (n.intAttr("noop_with_empty_axes", 0))
      return n.setResult(n.input(0));
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  SmallVector<int64_t> dims;
  for (int64_t axis : axes) {
    FailureOr<int64_t> dim = n.normalizeAxis(axis, rank);
    if (failed(dim))
      return failure();
    if (llvm::is_contained(dims, *dim)) {
      n.error() << "axis " << axis << " is listed twice";
      return failure();
    }
    dims.push_back(*dim);
  }
  llvm::sort(dims);
  bool keepDims = n.intAttr("keepdims", 1) != 0;
  // Bool (ReduceMax/Min from opset 20): any/all, reduced as uint8.
  Type element = n.inputType(0).getElementType();
  if (element.isInteger(1) &&
      (std::is_same_v<OpTy, ReduceMaxOp> || std::is_same_v<OpTy, ReduceMinOp>)) {
    Type u8 = IntegerType::get(n.builder.getContext(), 8, IntegerType::Unsigned);
    FailureOr<Value> reduced =
        n.create<OpTy>(n.convertElementType(n.input(0), u8), dims, keepDims);
    if (failed(reduced))
      return failure();
    return n.setResult(n.convertElementType(*reduced, element));
  }
  return n.setResult(n.create<OpTy>(n.input(0), dims, keepDims));
}

/// Brings a norm's scale or bias to the normalized shape when ONNX's
/// unidirectional broadcasting allows a smaller one.
FailureOr<Value> toNormalizedShape(NodeImporter &n, Value value,
                                   ArrayRef<int64_t> normalized) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == normalized)
    return value;
  auto result =
      BroadcastOp::create(n.builder, n.loc, type.clone(normalized), value);
  FailureOr<Operation *> op = n.verified(result);
  if (failed(op))
    return failure();
  return result.getResult();
}

LogicalResult importNorm(NodeImporter &n, bool rms) {
  auto type = n.inputType(0);
  FailureOr<int64_t> dim =
      n.normalizeAxis(n.intAttr("axis", -1), type.getRank());
  if (failed(dim))
    return failure();
  ArrayRef<int64_t> normalized = type.getShape().drop_front(*dim);
  FailureOr<Value> scale = toNormalizedShape(n, n.input(1), normalized);
  if (failed(scale))
    return failure();
  double epsilon = n.floatAttr("epsilon", 1e-5f);
  if (rms)
    return n.setResult(
        n.create<RMSNormOp>(n.input(0), *scale, *dim, APFloat(epsilon)));
  Value bias;
  if (n.hasInput(2)) {
    FailureOr<Value> shaped = toNormalizedShape(n, n.input(2), normalized);
    if (failed(shaped))
      return failure();
    bias = *shaped;
  }
  FailureOr<Operation *> op = n.createInferred<LayerNormOp>(
      3, n.input(0), *scale, bias, *dim, APFloat(epsilon));
  if (failed(op))
    return failure();
  llvm::append_range(n.results, (*op)->getResults());
  return success();
}

LogicalResult importArgMax(NodeImporter &n) {
  FailureOr<int64_t> dim =
      n.normalizeAxis(n.intAttr("axis", 0), n.inputType(0).getRank());
  if (failed(dim))
    return failure();
  return n.setResult(
      n.create<ArgMaxOp>(n.input(0), *dim, n.intAttr("keepdims", 1) != 0,
                         n.intAttr("select_last_index", 0) != 0));
}

LogicalResult importCumSum(NodeImporter &n) {
  FailureOr<SmallVector<int64_t>> axis = n.constantInts(1, "axis");
  if (failed(axis))
    return failure();
  if (axis->size() != 1) {
    n.error() << "axis must be a single integer";
    return failure();
  }
  FailureOr<int64_t> dim =
      n.normalizeAxis(axis->front(), n.inputType(0).getRank());
  if (failed(dim))
    return failure();
  auto op = CumSumOp::create(n.builder, n.loc, n.input(0), *dim,
                             n.intAttr("exclusive", 0) != 0,
                             n.intAttr("reverse", 0) != 0);
  return n.setResult(op.getResult());
}

/// TopK: k as an input from opset 10 (an attribute before); values in
/// descending (ascending with largest = 0) order.
LogicalResult importTopK(NodeImporter &n) {
  int64_t k;
  if (n.opset < 10) {
    k = n.intAttr("k", -1);
  } else {
    FailureOr<SmallVector<int64_t>> ks = n.constantInts(1, "K");
    if (failed(ks))
      return failure();
    if (ks->size() != 1) {
      n.error() << "K must hold one integer";
      return failure();
    }
    k = ks->front();
  }
  FailureOr<int64_t> dim =
      n.normalizeAxis(n.intAttr("axis", -1), n.inputType(0).getRank());
  if (failed(dim))
    return failure();
  if (n.intAttr("sorted", 1) == 0) {
    n.error() << "sorted = 0 is not supported";
    return failure();
  }
  FailureOr<Operation *> op = n.createInferred<TopKOp>(
      2, n.input(0), k, *dim, n.intAttr("largest", 1) == 0);
  if (failed(op))
    return failure();
  llvm::append_range(n.results, (*op)->getResults());
  return success();
}

} // namespace

void mlir::dtc::addMathImporters(OpImporterTable &table) {
  table.add("TopK", 1, importTopK);
  table.add("ArgMax", 1, importArgMax);
  table.add("CumSum", 2, importCumSum);
  table.add("MatMul", 2, importMatMul);
  table.add("Gemm", 2, importGemm);
  table.add("Softmax", 1, importSoftmax<SoftmaxOp>);
  table.add("LogSoftmax", 1, importSoftmax<LogSoftmaxOp>);
  table.add("ReduceSum", 1,
            [](NodeImporter &n) { return importReduce<ReduceSumOp>(n, 13); });
  table.add("ReduceMean", 1,
            [](NodeImporter &n) { return importReduce<ReduceMeanOp>(n, 18); });
  table.add("ReduceMax", 1,
            [](NodeImporter &n) { return importReduce<ReduceMaxOp>(n, 18); });
  table.add("ReduceMin", 1,
            [](NodeImporter &n) { return importReduce<ReduceMinOp>(n, 18); });
  table.add("LayerNormalization", 2,
            [](NodeImporter &n) { return importNorm(n, /*rms=*/false); });
  table.add("RMSNormalization", 2,
            [](NodeImporter &n) { return importNorm(n, /*rms=*/true); });
}

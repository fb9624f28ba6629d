//===- ComposedImporters.cpp - ONNX ops built from other dtc ops ----------===//
//
// Tile, Pad, Trilu, OneHot, (inference) Dropout, GatherND, ScatterND, IsNaN
// and IsInf have no dtc op of their own: they are broadcasts, slices and
// concats, masks from iota/compare/select, gathers (of rows at linearized
// indices, or of padded positions) and scatters, or identities, which keeps the
// dialect small and every later pass (autodiff, sharding) working on them
// unchanged.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "dtc/Import/ONNX/ONNXImporter.h"

#include "dtc/Interpreter/TensorAttr.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::dtc;

namespace {

/// A scalar integer constant of type i64.
Value i64Scalar(NodeImporter &n, int64_t value) {
  Tensor t(DType::I64, {});
  t.ints()[0] = value;
  return n.constant(t);
}

/// Tile: out[i] = in[i mod d], via reshape [1, d0, 1, d1, ...], broadcast
/// to [r0, d0, r1, d1, ...] and reshape to [r0*d0, r1*d1, ...].
LogicalResult importTile(NodeImporter &n) {
  if (n.opset < 6) {
    n.error() << "the opset-1 form (tiles and axis inputs) is not supported";
    return failure();
  }
  FailureOr<SmallVector<int64_t>> repeats = n.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  auto type = n.inputType(0);
  if (static_cast<int64_t>(repeats->size()) != type.getRank()) {
    n.error() << "repeats has " << repeats->size() << " entries for rank "
              << type.getRank();
    return failure();
  }
  SmallVector<int64_t> interleaved, expanded, result;
  for (auto [dim, repeat] : llvm::zip(type.getShape(), *repeats)) {
    if (repeat < 0) {
      n.error() << "repeats must be non-negative";
      return failure();
    }
    interleaved.append({1, dim});
    expanded.append({repeat, dim});
    result.push_back(repeat * dim);
  }
  Value spread = n.reshape(n.input(0), interleaved);
  Value tiled =
      BroadcastOp::create(n.builder, n.loc, type.clone(expanded), spread);
  return n.setResult(n.reshape(tiled, result));
}

/// The source index along a dimension of `size` for padded position `p`
/// (negative: in the leading pad) in `mode` reflect, edge or wrap, as
/// numpy.pad computes them (reflection repeats with period 2 (size - 1)).
int64_t padSource(StringRef mode, int64_t p, int64_t size) {
  auto floorMod = [](int64_t a, int64_t b) { return ((a % b) + b) % b; };
  if (mode == "edge")
    return std::clamp<int64_t>(p, 0, size - 1);
  if (mode == "wrap")
    return floorMod(p, size);
  if (size == 1)
    return 0;
  int64_t period = 2 * (size - 1), m = floorMod(p, period);
  return m < size ? m : period - m;
}

/// Pad: per dimension, negative pads crop (a slice); positive ones
/// concatenate blocks of the constant value, or, in the reflect, edge and
/// wrap modes, gather the source positions along the dimension.
LogicalResult importPad(NodeImporter &n) {
  auto type = n.inputType(0);
  int64_t rank = type.getRank();
  std::string mode = "constant";
  if (const onnx::AttributeProto *attr = n.attribute("mode"))
    mode = attr->s();
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap") {
    n.error() << "unsupported mode '" << mode << "'";
    return failure();
  }
  Type element = type.getElementType();
  SmallVector<int64_t> pads;
  Value fill;
  if (n.opset < 11) {
    std::optional<SmallVector<int64_t>> attr =
        n.intsAttr(n.opset < 2 ? "paddings" : "pads");
    if (!attr) {
      n.error() << "needs the pads attribute";
      return failure();
    }
    pads = *attr;
    fill = n.scalar(n.floatAttr("value", 0), element);
  } else {
    FailureOr<SmallVector<int64_t>> given = n.constantInts(1, "pads");
    if (failed(given))
      return failure();
    pads = *given;
    fill = n.hasInput(2) ? n.convertElementType(n.reshape(n.input(2), {}),
                                                element)
                         : n.scalar(0, element);
  }
  SmallVector<int64_t> axes;
  if (n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = n.constantInts(3, "axes");
    if (failed(given))
      return failure();
    for (int64_t axis : *given) {
      FailureOr<int64_t> normalized = n.normalizeAxis(axis, rank);
      if (failed(normalized))
        return failure();
      axes.push_back(*normalized);
    }
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  size_t count = axes.size();
  if (pads.size() != 2 * count) {
    n.error() << "pads has " << pads.size() << " entries for " << count
              << " dimensions (needs begins then ends)";
    return failure();
  }
  Value x = n.input(0);
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = axes[i], begin = pads[i], end = pads[i + count];
    int64_t size = cast<RankedTensorType>(x.getType()).getDimSize(axis);
    int64_t cropBegin = std::max<int64_t>(-begin, 0),
            cropEnd = std::max<int64_t>(-end, 0);
    if (cropBegin + cropEnd > size) {
      n.error() << "pads crop " << cropBegin + cropEnd
                << " elements from dimension " << axis << " of size " << size;
      return failure();
    }
    if (cropBegin || cropEnd) {
      size -= cropBegin + cropEnd;
      x = n.slice(x, axis, cropBegin, size);
    }
    begin = std::max<int64_t>(begin, 0);
    end = std::max<int64_t>(end, 0);
    if (!begin && !end)
      continue;
    FailureOr<Value> padded;
    if (mode == "constant") {
      padded = n.padWith(x, axis, begin, end, fill);
    } else {
      if (size == 0) {
        n.error() << "cannot pad the empty dimension " << axis << " in mode '"
                  << mode << "'";
        return failure();
      }
      Tensor sources(DType::I64, {begin + size + end});
      for (int64_t p = -begin; p < size + end; ++p)
        sources.ints()[p + begin] = padSource(mode, p, size);
      padded = n.create<GatherOp>(x, n.constant(sources), axis);
    }
    if (failed(padded))
      return failure();
    x = *padded;
  }
  return n.setResult(x);
}

/// The [rows, cols] index difference col - row of the last two dimensions
/// of `type`, as i64.
Value columnMinusRow(NodeImporter &n, RankedTensorType type) {
  auto indexType = RankedTensorType::get(type.getShape().take_back(2),
                                         n.builder.getI64Type());
  Value rows = IotaOp::create(n.builder, n.loc, indexType, 0);
  Value cols = IotaOp::create(n.builder, n.loc, indexType, 1);
  return SubOp::create(n.builder, n.loc, cols, rows);
}

/// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of
/// the last two dimensions and zeroes the rest.
LogicalResult importTrilu(NodeImporter &n) {
  auto type = n.inputType(0);
  if (type.getRank() < 2) {
    n.error() << "input must have rank >= 2";
    return failure();
  }
  int64_t k = 0;
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> values = n.constantInts(1, "k");
    if (failed(values))
      return failure();
    if (values->size() != 1) {
      n.error() << "k must be a single integer";
      return failure();
    }
    k = values->front();
  }
  if (type.getNumElements() == 0)
    return n.setResult(n.input(0));
  bool upper = n.intAttr("upper", 1) != 0;
  Value keep = CompareOp::create(n.builder, n.loc,
                                 upper ? ComparisonPredicate::GE
                                       : ComparisonPredicate::LE,
                                 columnMinusRow(n, type), i64Scalar(n, k));
  Value zero = n.scalar(0, type.getElementType());
  return n.setResult(n.create<SelectOp>(keep, n.input(0), zero));
}

/// OneHot: out[..., c, ...] = c == index ? on : off along the new `axis`;
/// negative indices count from depth, out-of-range ones select nothing.
LogicalResult importOneHot(NodeImporter &n) {
  FailureOr<Tensor> depthValue = n.constantInput(1, "depth");
  if (failed(depthValue))
    return failure();
  if (depthValue->numElements() != 1 || depthValue->at(0) < 1) {
    n.error() << "depth must be a positive scalar";
    return failure();
  }
  int64_t depth = static_cast<int64_t>(depthValue->at(0));
  auto valuesType = n.inputType(2);
  if (valuesType.getNumElements() != 2) {
    n.error() << "values must hold [off, on]";
    return failure();
  }
  ArrayRef<int64_t> shape = n.inputType(0).getShape();
  int64_t rank = shape.size() + 1;
  int64_t axis = n.intAttr("axis", -1);
  if (axis < -rank || axis >= rank) {
    n.error() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  if (axis < 0)
    axis += rank;

  Value indices = n.convertElementType(n.input(0), n.builder.getI64Type());
  Value negative = CompareOp::create(n.builder, n.loc, ComparisonPredicate::LT,
                                     indices, i64Scalar(n, 0));
  indices = SelectOp::create(
      n.builder, n.loc, negative,
      AddOp::create(n.builder, n.loc, indices, i64Scalar(n, depth)).getResult(),
      indices);
  SmallVector<int64_t> kept(shape), out(shape);
  kept.insert(kept.begin() + axis, 1);
  out.insert(out.begin() + axis, depth);
  Value classes =
      IotaOp::create(n.builder, n.loc,
                     RankedTensorType::get(out, n.builder.getI64Type()), axis);
  Value hot = CompareOp::create(n.builder, n.loc, ComparisonPredicate::EQ,
                                classes, n.reshape(indices, kept));
  Value flat = n.reshape(n.input(2), {2});
  auto pick = [&](int64_t i) { return n.reshape(n.slice(flat, 0, i, 1), {}); };
  return n.setResult(n.create<SelectOp>(hot, pick(1), pick(0)));
}

/// Dropout is the identity (with an all-true mask) outside training or with
/// ratio 0; in training (--dropout) it is dtc.dropout, keyed on the seed,
/// the node's position among the dropout sites, and the training step.
LogicalResult importDropout(NodeImporter &n) {
  double ratio = n.opset < 12 ? n.floatAttr("ratio", 0.5) : 0.5;
  if (n.opset >= 12 && n.hasInput(1)) {
    FailureOr<Tensor> value = n.constantInput(1, "ratio");
    if (failed(value))
      return failure();
    ratio = value->at(0);
  }
  bool training = n.model.options.trainingDropout;
  if (n.hasInput(2)) {
    FailureOr<Tensor> mode = n.constantInput(2, "training_mode");
    if (failed(mode))
      return failure();
    if (mode->at(0) != 0 && ratio != 0 && !training) {
      n.error() << "training-mode Dropout: import it for training "
                   "(dtc-compile --dropout), where dtc draws its masks";
      return failure();
    }
  }
  if (!(ratio >= 0 && ratio < 1)) {
    n.error() << "ratio " << ratio << " is not in [0, 1)";
    return failure();
  }
  auto maskType = n.inputType(0).clone(n.builder.getI1Type());
  if (!training || ratio == 0) {
    n.results.push_back(n.input(0));
    if (n.node.output_size() > 1)
      n.results.push_back(ConstantOp::create(
          n.builder, n.loc,
          DenseElementsAttr::get(maskType, n.builder.getBoolAttr(true))));
    return success();
  }
  int64_t stream = n.model.dropoutSites++;
  auto dropout = [&](Value x) {
    return DropoutOp::create(n.builder, n.loc, x.getType(), x,
                             n.model.stepArgument(), /*offset=*/Value(),
                             APFloat(ratio), n.model.options.dropoutSeed,
                             stream, /*global_shape=*/DenseI64ArrayAttr())
        .getResult();
  };
  if (failed(n.setResult(dropout(n.input(0)))))
    return failure();
  if (n.node.output_size() > 1) {
    // The mask: where a tensor of ones survives.
    Value ones = n.scalar(1, n.inputType(0).getElementType());
    Value kept = dropout(
        n.reshape(BroadcastOp::create(n.builder, n.loc,
                                      n.inputType(0).clone(ArrayRef<int64_t>{
                                          n.inputType(0).getNumElements()}),
                                      ones),
                  n.inputType(0).getShape()));
    n.results.push_back(
        CompareOp::create(n.builder, n.loc, ComparisonPredicate::NE, kept,
                          n.scalar(0, n.inputType(0).getElementType())));
  }
  return success();
}

/// For ND indices [I.., k] into dimensions b..b+k-1 of `dataShape` (b =
/// `batchDims`, the first b dimensions of data and indices being the same
/// batch), the row of data reshaped to [D0 * .. * D(b+k-1), rest] that each
/// index tuple selects: the batch position, then each index (negative ones
/// counting from the end), in row-major order. Shape [I..].
FailureOr<Value> linearIndexND(NodeImporter &n, Value indices,
                               ArrayRef<int64_t> dataShape, int64_t batchDims) {
  auto type = cast<RankedTensorType>(indices.getType());
  if (!type.getElementType().isInteger(64) || type.getRank() < 1) {
    n.error() << "indices must be an int64 tensor of rank >= 1";
    return failure();
  }
  int64_t k = type.getShape().back();
  ArrayRef<int64_t> outShape = type.getShape().drop_back();
  if (k < 1 || batchDims < 0 ||
      batchDims + k > static_cast<int64_t>(dataShape.size()) ||
      batchDims > static_cast<int64_t>(outShape.size()) ||
      outShape.take_front(batchDims) != dataShape.take_front(batchDims)) {
    n.error() << "indices of shape " << type << " do not index data of rank "
              << dataShape.size() << " with batch_dims = " << batchDims;
    return failure();
  }
  auto indexType = RankedTensorType::get(outShape, n.builder.getI64Type());
  Value row;
  auto append = [&](Value digit, int64_t radix) {
    row = row ? AddOp::create(n.builder, n.loc,
                              MulOp::create(n.builder, n.loc, row,
                                            i64Scalar(n, radix)),
                              digit)
              : digit;
  };
  for (int64_t d = 0; d < batchDims; ++d)
    append(IotaOp::create(n.builder, n.loc, indexType, d), dataShape[d]);
  for (int64_t j = 0; j < k; ++j) {
    Value index = n.reshape(n.slice(indices, -1, j, 1), outShape);
    int64_t size = dataShape[batchDims + j];
    Value negative = CompareOp::create(n.builder, n.loc, ComparisonPredicate::LT,
                                       index, i64Scalar(n, 0));
    Value wrapped = SelectOp::create(
        n.builder, n.loc, negative,
        AddOp::create(n.builder, n.loc, index, i64Scalar(n, size)), index);
    append(wrapped, size);
  }
  return row;
}

/// `shape` with its first `n` dimensions multiplied into one.
SmallVector<int64_t> collapseFront(ArrayRef<int64_t> shape, int64_t n) {
  int64_t rows = 1;
  for (int64_t dim : shape.take_front(n))
    rows *= dim;
  SmallVector<int64_t> result{rows};
  llvm::append_range(result, shape.drop_front(n));
  return result;
}

/// GatherND: a gather of rows of data reshaped to [D0 * .. * D(b+k-1),
/// rest] at the linearized indices.
LogicalResult importGatherND(NodeImporter &n) {
  int64_t batchDims = n.intAttr("batch_dims", 0);
  ArrayRef<int64_t> dataShape = n.inputType(0).getShape();
  FailureOr<Value> rows = linearIndexND(n, n.input(1), dataShape, batchDims);
  if (failed(rows))
    return failure();
  int64_t k = n.inputType(1).getShape().back();
  Value table = n.reshape(n.input(0), collapseFront(dataShape, batchDims + k));
  return n.setResult(n.create<GatherOp>(table, *rows, 0));
}

/// ScatterND: the updates scattered into rows of data reshaped to
/// [D0 * .. * D(k-1), rest], added (add), combined (mul, max, min: a
/// scatter_reduce), or, without a reduction, taken by the rows they hit
/// (ONNX leaves duplicate indices undefined).
LogicalResult importScatterND(NodeImporter &n) {
  std::string reduction = "none";
  if (const onnx::AttributeProto *attr = n.attribute("reduction"))
    reduction = attr->s();
  std::optional<ScatterReduction> kind = symbolizeScatterReduction(reduction);
  if (reduction != "none" && reduction != "add" && !kind) {
    n.error() << "unsupported ScatterND reduction '" << reduction << "'";
    return failure();
  }
  auto dataType = n.inputType(0);
  if (dataType.getElementType().isInteger(1)) {
    n.error() << "bool data is not supported";
    return failure();
  }
  FailureOr<Value> rows =
      linearIndexND(n, n.input(1), dataType.getShape(), /*batchDims=*/0);
  if (failed(rows))
    return failure();
  int64_t k = n.inputType(1).getShape().back();
  Value table = n.reshape(n.input(0), collapseFront(dataType.getShape(), k));
  auto tableType = cast<RankedTensorType>(table.getType());
  auto scatter = [&](Value into, Value updates) -> FailureOr<Value> {
    return Value(ScatterAddOp::create(n.builder, n.loc, tableType, into, *rows,
                                      updates, 0));
  };
  FailureOr<Value> result;
  if (reduction == "add")
    result = scatter(table, n.input(2));
  else if (kind)
    result = Value(ScatterReduceOp::create(n.builder, n.loc, tableType, table,
                                           *rows, n.input(2), 0, *kind));
  else
    result = scatterReplacing(n, table, n.input(2), scatter);
  if (failed(result) || failed(n.verified(result->getDefiningOp())))
    return failure();
  return n.setResult(n.reshape(*result, dataType.getShape()));
}

} // namespace

FailureOr<Value> mlir::dtc::scatterReplacing(
    NodeImporter &n, Value data, Value updates,
    llvm::function_ref<FailureOr<Value>(Value into, Value updates)>
        scatterAdd) {
  auto dataType = cast<RankedTensorType>(data.getType());
  Type element = dataType.getElementType();
  auto splat = [&](RankedTensorType type, double value) -> Value {
    return BroadcastOp::create(n.builder, n.loc, type,
                               n.scalar(value, element));
  };
  FailureOr<Value> hits = scatterAdd(
      splat(dataType, 0), splat(cast<RankedTensorType>(updates.getType()), 1));
  FailureOr<Value> scattered = scatterAdd(splat(dataType, 0), updates);
  if (failed(hits) || failed(scattered))
    return failure();
  Value hit = CompareOp::create(n.builder, n.loc, ComparisonPredicate::GT,
                                *hits, n.scalar(0, element));
  return Value(SelectOp::create(n.builder, n.loc, hit, *scattered, data));
}

namespace {

/// IsNaN: x != x.
LogicalResult importIsNaN(NodeImporter &n) {
  if (!isa<FloatType>(n.inputType(0).getElementType())) {
    n.error() << "input must be a float tensor";
    return failure();
  }
  return n.setResult(Value(CompareOp::create(
      n.builder, n.loc, ComparisonPredicate::NE, n.input(0), n.input(0))));
}

/// IsInf: x == +inf (detect_positive), x == -inf (detect_negative), or
/// either.
LogicalResult importIsInf(NodeImporter &n) {
  Type element = n.inputType(0).getElementType();
  if (!isa<FloatType>(element)) {
    n.error() << "input must be a float tensor";
    return failure();
  }
  auto equals = [&](double value) -> Value {
    return CompareOp::create(n.builder, n.loc, ComparisonPredicate::EQ,
                             n.input(0), n.scalar(value, element));
  };
  bool positive = n.intAttr("detect_positive", 1) != 0;
  bool negative = n.intAttr("detect_negative", 1) != 0;
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (positive && negative)
    return n.setResult(
        Value(OrOp::create(n.builder, n.loc, equals(inf), equals(-inf))));
  if (positive || negative)
    return n.setResult(equals(positive ? inf : -inf));
  // Neither: all false.
  return n.setResult(Value(ConstantOp::create(
      n.builder, n.loc,
      DenseElementsAttr::get(n.inputType(0).clone(n.builder.getI1Type()),
                             n.builder.getBoolAttr(false)))));
}

} // namespace

void mlir::dtc::addComposedImporters(OpImporterTable &table) {
  table.add("GatherND", 2, importGatherND);
  table.add("ScatterND", 3, importScatterND);
  table.add("IsNaN", 1, importIsNaN);
  table.add("IsInf", 1, importIsInf);
  table.add("Pad", 1, importPad);
  table.add("Tile", 2, importTile);
  table.add("Trilu", 1, importTrilu);
  table.add("OneHot", 3, importOneHot);
  table.add("Dropout", 1, importDropout);
}

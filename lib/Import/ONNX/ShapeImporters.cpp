//===- ShapeImporters.cpp - ONNX constants, shapes and data movement ------===//
//
// Constant, Shape, Size, ConstantOfShape, Range (all folded to constants),
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Concat, Slice,
// Split, Gather.
//
//===----------------------------------------------------------------------===//

#include "NodeImporter.h"

#include "dtc/Interpreter/TensorAttr.h"
#include "dtc/Runtime/ONNX/TensorProto.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dtc;

namespace {

Tensor int64Tensor(ArrayRef<int64_t> values, Shape shape) {
  Tensor tensor(DType::I64, std::move(shape));
  llvm::copy(values, tensor.ints().begin());
  return tensor;
}

LogicalResult importConstant(NodeImporter &n) {
  for (const onnx::AttributeProto &attr : n.node.attribute()) {
    const std::string &name = attr.name();
    if (name == "value") {
      std::string error;
      std::optional<Tensor> tensor = tensorFromProto(attr.t(), "", error);
      if (!tensor) {
        n.error() << error;
        return failure();
      }
      return n.setResult(n.constant(*tensor));
    }
    if (name == "value_float" || name == "value_floats") {
      SmallVector<double> values(attr.floats().begin(), attr.floats().end());
      if (name == "value_float")
        values = {attr.f()};
      Tensor tensor(DType::F32, name == "value_float"
                                    ? Shape{}
                                    : Shape{int64_t(values.size())});
      llvm::copy(values, tensor.floats().begin());
      tensor.roundToElementType();
      return n.setResult(n.constant(tensor));
    }
    if (name == "value_int")
      return n.setResult(n.constant(int64Tensor({attr.i()}, {})));
    if (name == "value_ints") {
      SmallVector<int64_t> values(attr.ints().begin(), attr.ints().end());
      return n.setResult(
          n.constant(int64Tensor(values, {int64_t(values.size())})));
    }
  }
  n.error() << "needs a value, value_float(s) or value_int(s) attribute "
               "(sparse and string constants are not supported)";
  return failure();
}

LogicalResult importShape(NodeImporter &n) {
  ArrayRef<int64_t> shape = n.inputType(0).getShape();
  int64_t rank = shape.size();
  int64_t start = n.intAttr("start", 0), end = n.intAttr("end", rank);
  start = std::clamp(start < 0 ? start + rank : start, int64_t(0), rank);
  end = std::clamp(end < 0 ? end + rank : end, int64_t(0), rank);
  ArrayRef<int64_t> dims =
      start < end ? shape.slice(start, end - start) : ArrayRef<int64_t>();
  return n.setResult(
      n.constant(int64Tensor(dims, {static_cast<int64_t>(dims.size())})));
}

/// The largest tensor a ConstantOfShape or Range may describe (as any
/// tensor the importer types): ConstantOfShape is a splat and a long Range
/// is computed by ops, so neither costs memory at compile time.
constexpr int64_t kMaxConstantElements = int64_t(1) << 48;

LogicalResult checkConstantSize(NodeImporter &n, ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim > 0 && count > kMaxConstantElements / dim) {
      n.error() << "the constant would have more than " << kMaxConstantElements
                << " elements";
      return failure();
    }
    count *= dim;
  }
  return success();
}

LogicalResult importConstantOfShape(NodeImporter &n) {
  FailureOr<SmallVector<int64_t>> shape = n.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  Tensor fill(DType::F32, {1});
  if (const onnx::AttributeProto *attr = n.attribute("value")) {
    std::string error;
    std::optional<Tensor> value = tensorFromProto(attr->t(), "", error);
    if (!value || value->numElements() != 1) {
      n.error() << "value must be a one-element tensor";
      return failure();
    }
    fill = *value;
  }
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
    n.error() << "shape has a negative dimension";
    return failure();
  }
  if (failed(checkConstantSize(n, *shape)))
    return failure();
  // A splat: one element, whatever the shape.
  auto value = cast<DenseElementsAttr>(
      denseAttrFromTensor(n.builder.getContext(), fill.reshaped({})));
  auto type = RankedTensorType::get(*shape, value.getElementType());
  return n.setResult(Value(ConstantOp::create(
      n.builder, n.loc,
      DenseElementsAttr::get(type, value.getSplatValue<Attribute>()))));
}

LogicalResult importRange(NodeImporter &n) {
  FailureOr<Tensor> start = n.constantInput(0, "start");
  FailureOr<Tensor> limit = n.constantInput(1, "limit");
  FailureOr<Tensor> delta = n.constantInput(2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  double s = start->at(0), l = limit->at(0), d = delta->at(0);
  if (d == 0) {
    n.error() << "delta is zero";
    return failure();
  }
  double steps = std::ceil((l - s) / d);
  if (!(steps < double(kMaxConstantElements))) {
    n.error() << "the range has more than " << kMaxConstantElements
              << " elements";
    return failure();
  }
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
  if (count > kMaxFoldedElements) {
    // start + iota * delta as ops: a long range is computed, not stored;
    // 16-bit floats in f32, as Range-27's default stash_type says.
    Type element = n.inputType(0).getElementType();
    Type compute = element.isF16() || element.isBF16()
                       ? Type(n.builder.getF32Type())
                       : element;
    auto type = RankedTensorType::get({count}, compute);
    Value index = IotaOp::create(n.builder, n.loc,
                                 type.clone(n.builder.getI64Type()), 0);
    index = n.convertElementType(index, compute);
    FailureOr<Value> scaled = n.create<MulOp>(
        index, n.convertElementType(n.constant(*delta), compute));
    if (failed(scaled))
      return failure();
    FailureOr<Value> range = n.create<AddOp>(
        *scaled, n.convertElementType(n.constant(*start), compute));
    if (failed(range))
      return failure();
    return n.setResult(n.convertElementType(*range, element));
  }
  Tensor result(start->dtype(), {count});
  for (int64_t i = 0; i < count; ++i) {
    if (result.isFloat())
      result.floats()[i] = s + i * d;
    else
      result.ints()[i] = start->ints()[0] + i * delta->ints()[0];
  }
  result.roundToElementType();
  return n.setResult(n.constant(result));
}

/// Reshape: 0 copies the input dimension (unless allowzero), -1 is inferred.
LogicalResult importReshape(NodeImporter &n) {
  FailureOr<SmallVector<int64_t>> requested = n.constantInts(1, "shape");
  if (failed(requested))
    return failure();
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  bool allowZero = n.intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, dim] : llvm::enumerate(*requested)) {
    if (dim == 0 && !allowZero) {
      if (i >= in.size()) {
        n.error() << "shape entry " << i
                  << " is 0 (copy) but the input has rank " << in.size();
        return failure();
      }
      dim = in[i];
    }
    if (dim == -1) {
      if (inferred >= 0) {
        n.error() << "shape has more than one -1";
        return failure();
      }
      inferred = i;
    } else if (dim < 0) {
      n.error() << "shape entry " << dim << " is invalid";
      return failure();
    } else {
      known *= dim;
    }
    shape.push_back(dim);
  }
  int64_t total = n.inputType(0).getNumElements();
  if (inferred >= 0 && known != 0 && total % known == 0)
    shape[inferred] = total / known;
  if ((inferred >= 0 && shape[inferred] < 0) ||
      ShapedType::getNumElements(shape) != total) {
    n.error() << "cannot reshape " << n.inputType(0)
              << " to the requested shape (element counts differ)";
    return failure();
  }
  return n.setResult(n.reshape(n.input(0), shape));
}

LogicalResult importFlatten(NodeImporter &n) {
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  int64_t rank = in.size(), axis = n.intAttr("axis", 1);
  if (axis < -rank || axis > rank) {
    n.error() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  if (axis < 0)
    axis += rank;
  int64_t rows = ShapedType::getNumElements(in.take_front(axis));
  return n.setResult(n.reshape(
      n.input(0), {rows, ShapedType::getNumElements(in.drop_front(axis))}));
}

/// The axes of Squeeze/Unsqueeze: an attribute before opset 13, the optional
/// second input from 13 on.
FailureOr<std::optional<SmallVector<int64_t>>> squeezeAxes(NodeImporter &n) {
  if (n.opset < 13)
    return n.intsAttr("axes");
  if (!n.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = n.constantInts(1, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

LogicalResult importSqueeze(NodeImporter &n) {
  auto axes = squeezeAxes(n);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  SmallVector<bool> drop(in.size(), false);
  if (*axes) {
    for (int64_t axis : **axes) {
      FailureOr<int64_t> dim = n.normalizeAxis(axis, in.size());
      if (failed(dim))
        return failure();
      if (in[*dim] != 1) {
        n.error() << "cannot squeeze dimension " << *dim << " of size "
                  << in[*dim];
        return failure();
      }
      drop[*dim] = true;
    }
  } else {
    for (auto [i, size] : llvm::enumerate(in))
      drop[i] = size == 1;
  }
  SmallVector<int64_t> shape;
  for (auto [i, size] : llvm::enumerate(in))
    if (!drop[i])
      shape.push_back(size);
  return n.setResult(n.reshape(n.input(0), shape));
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  auto axes = squeezeAxes(n);
  if (failed(axes))
    return failure();
  if (!*axes) {
    n.error() << "needs axes";
    return failure();
  }
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  int64_t rank = in.size() + (*axes)->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : **axes) {
    FailureOr<int64_t> dim = n.normalizeAxis(axis, rank);
    if (failed(dim))
      return failure();
    if (inserted[*dim]) {
      n.error() << "axis " << axis << " is listed twice";
      return failure();
    }
    inserted[*dim] = true;
  }
  SmallVector<int64_t> shape;
  auto next = in.begin();
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(inserted[i] ? 1 : *next++);
  return n.setResult(n.reshape(n.input(0), shape));
}

LogicalResult importTranspose(NodeImporter &n) {
  int64_t rank = n.inputType(0).getRank();
  SmallVector<int64_t> perm;
  if (auto attr = n.intsAttr("perm"))
    perm = *attr;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  return n.setResult(n.create<TransposeOp>(n.input(0), perm));
}

LogicalResult importExpand(NodeImporter &n) {
  FailureOr<SmallVector<int64_t>> requested = n.constantInts(1, "shape");
  if (failed(requested))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes({n.inputType(0).getShape(), *requested});
  if (failed(shape)) {
    n.error() << "cannot broadcast " << n.inputType(0)
              << " to the requested shape";
    return failure();
  }
  if (*shape == SmallVector<int64_t>(n.inputType(0).getShape()))
    return n.setResult(n.input(0));
  return n.setResult(BroadcastOp::create(n.builder, n.loc,
                                         n.inputType(0).clone(*shape),
                                         n.input(0))
                         .getResult());
}

LogicalResult importConcat(NodeImporter &n) {
  // The axis defaults to 1 before opset 4 and is required from then on.
  if (!n.attribute("axis") && n.opset >= 4) {
    n.error() << "needs an axis attribute";
    return failure();
  }
  FailureOr<int64_t> dim =
      n.normalizeAxis(n.intAttr("axis", 1), n.inputType(0).getRank());
  if (failed(dim))
    return failure();
  for (unsigned i = 0; i < n.inputs.size(); ++i)
    if (!n.hasInput(i)) {
      n.error() << "input " << i << " is missing";
      return failure();
    }
  return n.setResult(n.create<ConcatOp>(ValueRange(n.inputs), *dim));
}

/// Slice with ONNX's clamping: for a positive step, start and end clamp to
/// [0, d]; for a negative step, start to [0, d-1] and end to [-1, d-1].
LogicalResult importSlice(NodeImporter &n) {
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  int64_t rank = in.size();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    starts = n.intsAttr("starts").value_or(SmallVector<int64_t>());
    ends = n.intsAttr("ends").value_or(SmallVector<int64_t>());
    axes = n.intsAttr("axes").value_or(SmallVector<int64_t>());
  } else {
    auto s = n.constantInts(1, "starts"), e = n.constantInts(2, "ends");
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    for (auto [index, out] : {std::pair(3u, &axes), std::pair(4u, &steps)}) {
      if (!n.hasInput(index))
        continue;
      auto values = n.constantInts(index, index == 3 ? "axes" : "steps");
      if (failed(values))
        return failure();
      *out = *values;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    n.error() << "starts, ends, axes and steps must have the same length";
    return failure();
  }
  SmallVector<int64_t> outStarts(rank, 0), sizes(in), strides(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> dim = n.normalizeAxis(axes[i], rank);
    if (failed(dim))
      return failure();
    if (seen[*dim] || steps[i] == 0) {
      n.error() << (steps[i] == 0 ? "a step is zero" : "an axis repeats");
      return failure();
    }
    seen[*dim] = true;
    int64_t d = in[*dim], step = steps[i];
    int64_t start = starts[i] < 0 ? starts[i] + d : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + d : ends[i];
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, d);
      end = std::clamp<int64_t>(end, 0, d);
      size = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, d - 1);
      end = std::clamp<int64_t>(end, -1, d - 1);
      size = start > end ? (start - end - step - 1) / -step : 0;
    }
    outStarts[*dim] = size > 0 ? start : 0;
    sizes[*dim] = size;
    strides[*dim] = step;
  }
  return n.setResult(n.create<SliceOp>(n.input(0), outStarts, sizes, strides));
}

LogicalResult importSplit(NodeImporter &n) {
  auto type = n.inputType(0);
  FailureOr<int64_t> dim =
      n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(dim))
    return failure();
  int64_t total = type.getDimSize(*dim);
  SmallVector<int64_t> sizes;
  if (n.opset < 13 && n.attribute("split")) {
    sizes = *n.intsAttr("split");
  } else if (n.opset >= 13 && n.hasInput(1)) {
    auto fromInput = n.constantInts(1, "split");
    if (failed(fromInput))
      return failure();
    sizes = *fromInput;
  } else {
    int64_t parts = n.intAttr("num_outputs", n.node.output_size());
    if (parts <= 0) {
      n.error() << "needs at least one output";
      return failure();
    }
    int64_t chunk = (total + parts - 1) / parts;
    if (!n.attribute("num_outputs") && total % parts != 0) {
      n.error() << "dimension " << *dim << " of size " << total
                << " does not split evenly into " << parts << " outputs";
      return failure();
    }
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, total - i * chunk)));
  }
  FailureOr<Operation *> op =
      n.createInferred<SplitOp>(sizes.size(), n.input(0), *dim, sizes);
  if (failed(op))
    return failure();
  llvm::append_range(n.results, (*op)->getResults());
  return success();
}

/// Gather. Where NonZero's static form gives the indices and they read
/// each row in order, once or repeated, it is a reshape or a broadcast: no
/// indices, and a layout a split of the rows carries through.
LogicalResult importGather(NodeImporter &n) {
  RankedTensorType tableType = n.inputType(0);
  FailureOr<int64_t> dim =
      n.normalizeAxis(n.intAttr("axis", 0), tableType.getRank());
  if (failed(dim))
    return failure();
  std::optional<int64_t> repeats;
  PositionsForm *positions = positionsRead(n);
  if (positions)
    if (std::optional<Tensor> indices = n.knownConstant(1))
      repeats = repeatedRows(*indices, tableType.getDimSize(*dim));
  FailureOr<Value> result;
  if (repeats) {
    ArrayRef<int64_t> shape = tableType.getShape();
    SmallVector<int64_t> resultShape(shape.take_front(*dim));
    llvm::append_range(resultShape, n.inputType(1).getShape());
    llvm::append_range(resultShape, shape.drop_front(*dim + 1));
    result = gatherRepeatedRows(n, n.input(0), *dim, *repeats, resultShape);
  } else {
    result = n.create<GatherOp>(n.input(0), n.input(1), *dim);
  }
  if (positions && succeeded(result))
    positions->rows.push_back(*result);
  return n.setResult(result);
}

LogicalResult importGatherElements(NodeImporter &n) {
  FailureOr<int64_t> dim =
      n.normalizeAxis(n.intAttr("axis", 0), n.inputType(0).getRank());
  if (failed(dim))
    return failure();
  auto type = n.inputType(1).clone(n.inputType(0).getElementType());
  auto op = GatherElementsOp::create(n.builder, n.loc, type, n.input(0),
                                     n.input(1), *dim);
  return n.setResult(op.getResult());
}

} // namespace

ArrayRef<unsigned> mlir::dtc::staticOperandIndices(StringRef opType) {
  static const llvm::StringMap<SmallVector<unsigned>> table = {
      {"Reshape", {1}},    {"Expand", {1}},          {"Squeeze", {1}},
      {"Unsqueeze", {1}},  {"Split", {1}},           {"Slice", {1, 2, 3, 4}},
      {"ReduceSum", {1}},  {"ReduceMean", {1}},      {"ReduceMax", {1}},
      {"ReduceMin", {1}},  {"ConstantOfShape", {0}}, {"Range", {0, 1, 2}},
      {"Tile", {1}},       {"Trilu", {1}},           {"OneHot", {1}},
      {"Dropout", {1, 2}}, {"CumSum", {1}},          {"TopK", {1}},
      {"SequenceAt", {1}}, {"SequenceInsert", {2}},  {"SequenceErase", {1}},
      {"SplitToSequence", {1}}, {"Pad", {1, 3}},
  };
  auto it = table.find(opType);
  return it == table.end() ? ArrayRef<unsigned>() : ArrayRef(it->second);
}

void mlir::dtc::addShapeImporters(OpImporterTable &table) {
  table.add("Constant", 0, importConstant);
  table.add("Shape", 1, importShape);
  table.add("Size", 1, [](NodeImporter &n) {
    return n.setResult(
        n.constant(int64Tensor({n.inputType(0).getNumElements()}, {})));
  });
  table.add("ConstantOfShape", 1, importConstantOfShape);
  table.add("Range", 3, importRange);
  table.add("Reshape", 2, importReshape);
  table.add("Flatten", 1, importFlatten);
  table.add("Squeeze", 1, importSqueeze);
  table.add("Unsqueeze", 1, importUnsqueeze);
  table.add("Transpose", 1, importTranspose);
  table.add("Expand", 2, importExpand);
  table.add("Concat", 1, importConcat);
  table.add("Slice", 1, importSlice);
  table.add("Split", 1, importSplit);
  table.add("Gather", 2, importGather);
  table.add("GatherElements", 2, importGatherElements);
}

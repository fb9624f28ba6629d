//===- NodeImporter.cpp - importing one ONNX node -------------------------===//

#include "NodeImporter.h"

#include "dtc/Interpreter/TensorAttr.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::dtc;

FailureOr<Tensor> NodeImporter::constantInput(unsigned i, StringRef what) {
  if (!hasInput(i)) {
    error() << "missing its " << what << " operand";
    return failure();
  }
  std::optional<Tensor> value = resolveConstant(inputs[i]);
  if (!value) {
    error() << "its " << what << " operand ('" << node.input(i)
            << "') determines a shape and must be a constant; dtc compiles "
               "static shapes (bind graph inputs with --bind-inputs)";
    return failure();
  }
  return std::move(*value);
}

FailureOr<SmallVector<int64_t>> NodeImporter::constantInts(unsigned i,
                                                           StringRef what) {
  FailureOr<Tensor> value = constantInput(i, what);
  if (failed(value))
    return failure();
  if (value->isFloat()) {
    error() << "its " << what << " operand must hold integers";
    return failure();
  }
  return SmallVector<int64_t>(value->ints().begin(), value->ints().end());
}

const onnx::AttributeProto *NodeImporter::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t NodeImporter::intAttr(StringRef name, int64_t fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->i() : fallback;
}

float NodeImporter::floatAttr(StringRef name, float fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  return attr ? attr->f() : fallback;
}

std::optional<SmallVector<int64_t>>
NodeImporter::intsAttr(StringRef name) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

InFlightDiagnostic NodeImporter::error() { return emitError(loc); }

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank,
                                               StringRef what) {
  if (axis < -rank || axis >= rank) {
    error() << what << " " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

FailureOr<Operation *> NodeImporter::verified(Operation *op) {
  if (succeeded(verify(op)))
    return op;
  op->erase();
  return failure();
}

FailureOr<ArrayRef<Value>> NodeImporter::sequenceInput(unsigned i) {
  auto it = i < static_cast<unsigned>(node.input_size())
                ? model.sequences.find(node.input(i))
                : model.sequences.end();
  if (it == model.sequences.end()) {
    error() << "input " << i << " must be a sequence";
    return failure();
  }
  return ArrayRef<Value>(it->second);
}

void NodeImporter::setSequenceResult(unsigned i, SmallVector<Value> tensors) {
  model.sequences[node.output(i)] = std::move(tensors);
  if (results.size() <= i)
    results.resize(i + 1);
}

LogicalResult NodeImporter::setResult(FailureOr<Value> value) {
  if (failed(value))
    return failure();
  if (Operation *op = value->getDefiningOp())
    if (failed(verified(op)))
      return failure();
  results.push_back(*value);
  return success();
}

Value NodeImporter::constant(const Tensor &tensor) {
  return ConstantOp::create(builder, loc,
                            denseAttrFromTensor(builder.getContext(), tensor));
}

Value NodeImporter::scalar(double value, Type elementType) {
  Tensor tensor(*dtypeOf(elementType), {});
  if (tensor.isFloat())
    tensor.floats()[0] = value;
  else
    tensor.ints()[0] = static_cast<int64_t>(value);
  tensor.roundToElementType();
  return constant(tensor);
}

Value NodeImporter::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return ReshapeOp::create(builder, loc, type.clone(shape), value);
}

Value NodeImporter::slice(Value value, int64_t dim, int64_t start,
                          int64_t size, int64_t step) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (dim < 0)
    dim += rank;
  SmallVector<int64_t> starts(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  starts[dim] = start;
  sizes[dim] = size;
  strides[dim] = step;
  return SliceOp::create(builder, loc, value, starts, sizes, strides);
}

FailureOr<Value> NodeImporter::padWith(Value value, int64_t dim, int64_t begin,
                                       int64_t end, Value fill) {
  if (!begin && !end)
    return value;
  auto type = cast<RankedTensorType>(value.getType());
  auto block = [&](int64_t width) -> Value {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = width;
    return BroadcastOp::create(builder, loc, type.clone(shape), fill);
  };
  SmallVector<Value> parts;
  if (begin)
    parts.push_back(block(begin));
  parts.push_back(value);
  if (end)
    parts.push_back(block(end));
  return create<ConcatOp>(parts, dim);
}

Value NodeImporter::convertElementType(Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  return CastOp::create(builder, loc, type.clone(elementType), value);
}

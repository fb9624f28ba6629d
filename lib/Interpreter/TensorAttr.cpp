//===- TensorAttr.cpp - runtime tensors <-> MLIR types and attrs ----------===//

#include "dtc/Interpreter/TensorAttr.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;
using namespace mlir::dtc;

std::optional<DType> mlir::dtc::dtypeOf(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF16())
    return DType::F16;
  if (type.isInteger(1))
    return DType::Bool;
  if (type.isUnsignedInteger(8))
    return DType::U8;
  if (type.isSignlessInteger(64))
    return DType::I64;
  if (type.isSignlessInteger(32))
    return DType::I32;
  if (type.isSignlessInteger(16))
    return DType::I16;
  if (type.isSignlessInteger(8))
    return DType::I8;
  return std::nullopt;
}

Type mlir::dtc::elementTypeOf(MLIRContext *context, DType dtype) {
  Builder b(context);
  switch (dtype) {
  case DType::F32:
    return b.getF32Type();
  case DType::F64:
    return b.getF64Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::F16:
    return b.getF16Type();
  case DType::I64:
    return b.getI64Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I16:
    return b.getI16Type();
  case DType::I8:
    return b.getI8Type();
  case DType::U8:
    return IntegerType::get(context, 8, IntegerType::Unsigned);
  case DType::Bool:
    return b.getI1Type();
  }
  return {};
}

RankedTensorType mlir::dtc::tensorTypeOf(MLIRContext *context,
                                         const Tensor &tensor) {
  return RankedTensorType::get(tensor.shape(),
                               elementTypeOf(context, tensor.dtype()));
}

FailureOr<Tensor> mlir::dtc::tensorFromAttr(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<DType> dtype = dtypeOf(type.getElementType());
  if (!dtype || !type.hasStaticShape())
    return failure();
  Shape shape(type.getShape());

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    ArrayRef<char> data = resource.getData();
    if (data.size() != Tensor(*dtype, shape).byteSize())
      return failure(); // missing or mis-sized blob
    return Tensor::fromBytes(*dtype, shape, data.data());
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return failure();
  Tensor tensor(*dtype, shape);
  int64_t i = 0;
  if (tensor.isFloat()) {
    for (APFloat value : dense.getValues<APFloat>()) {
      bool lostInfo;
      value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &lostInfo);
      tensor.floats()[i++] = value.convertToDouble();
    }
  } else {
    bool zeroExtend = *dtype == DType::U8 || *dtype == DType::Bool;
    for (const APInt &value : dense.getValues<APInt>())
      tensor.ints()[i++] =
          zeroExtend ? value.getZExtValue() : value.getSExtValue();
  }
  return tensor;
}

ElementsAttr mlir::dtc::denseAttrFromTensor(MLIRContext *context,
                                            const Tensor &tensor) {
  RankedTensorType type = tensorTypeOf(context, tensor);
  if (tensor.dtype() == DType::Bool) {
    // (DenseElementsAttr::get makes a splat of equal values itself.)
    SmallVector<bool> values(tensor.ints().begin(), tensor.ints().end());
    return DenseElementsAttr::get(type, values);
  }
  std::vector<char> bytes = tensor.toBytes();
  // All elements equal: a splat, one element however large the shape.
  size_t width = bytes.size() / std::max<int64_t>(tensor.numElements(), 1);
  bool splat = width > 0;
  for (size_t i = width; splat && i < bytes.size(); i += width)
    splat = std::equal(bytes.begin(), bytes.begin() + width, bytes.begin() + i);
  if (splat)
    bytes.resize(width);
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

ElementsAttr mlir::dtc::resourceAttrFromTensor(MLIRContext *context,
                                               StringRef name,
                                               const Tensor &tensor) {
  std::vector<char> bytes = tensor.toBytes();
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(int64_t));
  return DenseResourceElementsAttr::get(tensorTypeOf(context, tensor), name,
                                        std::move(blob));
}

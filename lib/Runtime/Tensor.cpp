//===- Tensor.cpp - host tensors of the reference executor ----------------===//

#include "dtc/Runtime/Tensor.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

namespace mlir::dtc {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I16:
    return "i16";
  case DType::I8:
    return "i8";
  case DType::U8:
    return "ui8";
  case DType::Bool:
    return "i1";
  }
  return "?";
}

std::optional<DType> dtypeNamed(const std::string &name) {
  for (DType dtype :
       {DType::F32, DType::F64, DType::BF16, DType::F16, DType::I64, DType::I32,
        DType::I16, DType::I8, DType::U8, DType::Bool})
    if (name == dtypeName(dtype))
      return dtype;
  return std::nullopt;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
  case DType::F16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

bool isFloatDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::BF16 ||
         dtype == DType::F16;
}

static uint16_t floatToBF16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

static float bf16BitsToFloat(uint16_t half) {
  uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

double roundFloat(double value, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return static_cast<float>(value);
  case DType::BF16:
    return bf16BitsToFloat(floatToBF16Bits(static_cast<float>(value)));
  case DType::F16:
    return static_cast<double>(static_cast<_Float16>(value));
  default:
    return value;
  }
}

uint16_t halfBitsFromFloat(float value, DType dtype) {
  if (dtype == DType::BF16)
    return floatToBF16Bits(value);
  _Float16 half = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &half, 2);
  return bits;
}

float floatFromHalfBits(uint16_t bits, DType dtype) {
  if (dtype == DType::BF16)
    return bf16BitsToFloat(bits);
  _Float16 half;
  std::memcpy(&half, &bits, 2);
  return static_cast<float>(half);
}

int64_t wrapInt(int64_t value, DType dtype) {
  switch (dtype) {
  case DType::I32:
    return static_cast<int32_t>(value);
  case DType::I16:
    return static_cast<int16_t>(value);
  case DType::I8:
    return static_cast<int8_t>(value);
  case DType::U8:
    return static_cast<uint8_t>(value);
  case DType::Bool:
    return value != 0;
  default:
    return value;
  }
}

int64_t numElementsOf(const Shape &shape) {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

Shape stridesOf(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::string describe(const Shape &shape, DType dtype) {
  std::string text;
  for (int64_t dim : shape)
    text += std::to_string(dim) + "x";
  return text + dtypeName(dtype);
}

std::string describe(const Shape &shape) {
  std::string text = describe(shape, DType::F32);
  return shape.empty() ? "a scalar" : text.substr(0, text.rfind('x'));
}

Tensor::Tensor(DType dtype, Shape shape)
    : elementType(dtype), dims(std::move(shape)) {
  if (isFloat())
    floatData.assign(numElements(), 0.0);
  else
    intData.assign(numElements(), 0);
}

void Tensor::roundToElementType() {
  if (isFloat()) {
    if (elementType != DType::F64)
      for (double &value : floatData)
        value = roundFloat(value, elementType);
  } else if (elementType != DType::I64) {
    for (int64_t &value : intData)
      value = wrapInt(value, elementType);
  }
}

Tensor Tensor::reshaped(Shape shape) const {
  assert(numElementsOf(shape) == numElements() && "element counts differ");
  Tensor result = *this;
  result.dims = std::move(shape);
  return result;
}

template <typename T> static void packAs(const Tensor &tensor, char *out) {
  // Integers must not pass through double, which cannot hold all of i64.
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i) {
    T value = tensor.isFloat() ? static_cast<T>(tensor.floats()[i])
                               : static_cast<T>(tensor.ints()[i]);
    std::memcpy(out + i * sizeof(T), &value, sizeof(T));
  }
}

std::vector<char> Tensor::toBytes() const {
  std::vector<char> bytes(byteSize());
  char *out = bytes.data();
  switch (elementType) {
  case DType::F32:
    packAs<float>(*this, out);
    break;
  case DType::F64:
    packAs<double>(*this, out);
    break;
  case DType::F16:
    packAs<_Float16>(*this, out);
    break;
  case DType::BF16:
    for (int64_t i = 0, e = numElements(); i < e; ++i) {
      uint16_t bits = floatToBF16Bits(static_cast<float>(floatData[i]));
      std::memcpy(out + 2 * i, &bits, 2);
    }
    break;
  case DType::I64:
    packAs<int64_t>(*this, out);
    break;
  case DType::I32:
    packAs<int32_t>(*this, out);
    break;
  case DType::I16:
    packAs<int16_t>(*this, out);
    break;
  case DType::I8:
    packAs<int8_t>(*this, out);
    break;
  case DType::U8:
  case DType::Bool:
    packAs<uint8_t>(*this, out);
    break;
  }
  return bytes;
}

template <typename T> static void unpackAs(const char *bytes, Tensor &tensor) {
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i) {
    T value;
    std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
    if (tensor.isFloat())
      tensor.floats()[i] = static_cast<double>(value);
    else
      tensor.ints()[i] = static_cast<int64_t>(value);
  }
}

Tensor Tensor::fromBytes(DType dtype, Shape shape, const char *bytes) {
  Tensor tensor(dtype, std::move(shape));
  switch (dtype) {
  case DType::F32:
    unpackAs<float>(bytes, tensor);
    break;
  case DType::F64:
    unpackAs<double>(bytes, tensor);
    break;
  case DType::F16:
    unpackAs<_Float16>(bytes, tensor);
    break;
  case DType::BF16:
    for (int64_t i = 0, e = tensor.numElements(); i < e; ++i) {
      uint16_t bits;
      std::memcpy(&bits, bytes + 2 * i, 2);
      tensor.floats()[i] = bf16BitsToFloat(bits);
    }
    break;
  case DType::I64:
    unpackAs<int64_t>(bytes, tensor);
    break;
  case DType::I32:
    unpackAs<int32_t>(bytes, tensor);
    break;
  case DType::I16:
    unpackAs<int16_t>(bytes, tensor);
    break;
  case DType::I8:
    unpackAs<int8_t>(bytes, tensor);
    break;
  case DType::U8:
    unpackAs<uint8_t>(bytes, tensor);
    break;
  case DType::Bool:
    unpackAs<uint8_t>(bytes, tensor);
    tensor.roundToElementType();
    break;
  }
  return tensor;
}

Tensor withExtent(const Tensor &tensor, int64_t dim, int64_t size) {
  Shape shape = tensor.shape();
  std::vector<char> bytes = tensor.toBytes();
  // Blocks of `inner` bytes: `old` of them per index of the dimensions
  // before `dim`, `size` after.
  int64_t outer = 1, old = shape[dim];
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  size_t inner = dtypeSize(tensor.dtype());
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  std::vector<char> out(outer * size * inner, 0);
  int64_t kept = std::min(old, size);
  for (int64_t o = 0; o < outer; ++o)
    std::copy_n(bytes.data() + o * old * inner, kept * inner,
                out.data() + o * size * inner);
  shape[dim] = size;
  return Tensor::fromBytes(tensor.dtype(), shape, out.data());
}

} // namespace mlir::dtc

//===- Tensor.h - host tensors of the reference executor --------*- C++ -*-===//
//
// A dense, row-major host tensor with a dtc element type. Floating-point
// elements are held as double and integer/bool elements as int64_t, but every
// stored value is representable in the element type: `roundToElementType`
// rounds floats (to f32, bf16 or f16) and wraps integers (to their width), and
// the reference kernels apply it to every result. This keeps each kernel one
// short loop while its results are those of the element type.
//
// This library links neither LLVM nor MLIR (it shares only the namespace):
// compiled executables use it too.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_TENSOR_H
#define DTC_RUNTIME_TENSOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::dtc {

enum class DType : uint8_t { F32, F64, BF16, F16, I64, I32, I16, I8, U8, Bool };

/// The element type's name as dtc IR spells it ("f32", "i1", "ui8", ...).
const char *dtypeName(DType dtype);
/// The element type `dtypeName` spells `name`, if any.
std::optional<DType> dtypeNamed(const std::string &name);
/// Bytes per element in memory and in files.
size_t dtypeSize(DType dtype);
bool isFloatDType(DType dtype);

/// Rounds a double to the nearest value of a floating-point element type
/// (round to nearest even; bf16 rounds the f32 value).
double roundFloat(double value, DType dtype);
/// Wraps an integer to an integer element type (two's complement), or to 0/1
/// for bool.
int64_t wrapInt(int64_t value, DType dtype);

/// The 16-bit pattern of a float in bf16 or f16 (round to nearest even),
/// and back.
uint16_t halfBitsFromFloat(float value, DType dtype);
float floatFromHalfBits(uint16_t bits, DType dtype);

using Shape = std::vector<int64_t>;

int64_t numElementsOf(const Shape &shape);
/// Row-major strides, in elements.
Shape stridesOf(const Shape &shape);
/// "2x3xf32"-style text for messages.
std::string describe(const Shape &shape, DType dtype);
/// "2x3": a shape alone, of elements some other way typed.
std::string describe(const Shape &shape);

class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(DType dtype, Shape shape);

  DType dtype() const { return elementType; }
  const Shape &shape() const { return dims; }
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t numElements() const { return numElementsOf(dims); }
  bool isFloat() const { return isFloatDType(elementType); }
  /// Bytes the tensor occupies in its element type.
  size_t byteSize() const { return numElements() * dtypeSize(elementType); }

  /// Element storage; `floats` for floating-point tensors, `ints` otherwise.
  std::vector<double> &floats() { return floatData; }
  const std::vector<double> &floats() const { return floatData; }
  std::vector<int64_t> &ints() { return intData; }
  const std::vector<int64_t> &ints() const { return intData; }

  /// Element `i` (row-major) as a double, whatever the element type.
  double at(int64_t i) const {
    return isFloat() ? floatData[i] : static_cast<double>(intData[i]);
  }
  /// Element `i` as an integer (floats truncate toward zero).
  int64_t intAt(int64_t i) const {
    return isFloat() ? static_cast<int64_t>(floatData[i]) : intData[i];
  }

  /// Rounds or wraps every element to the element type.
  void roundToElementType();

  /// Same elements, other shape (the element counts must agree).
  Tensor reshaped(Shape shape) const;

  /// The elements packed little-endian in the element type (bf16/f16 as
  /// their 16-bit patterns, bool as one byte each).
  std::vector<char> toBytes() const;
  /// The inverse of toBytes; `bytes` must hold exactly the elements.
  static Tensor fromBytes(DType dtype, Shape shape, const char *bytes);

private:
  DType elementType = DType::F32;
  Shape dims;
  std::vector<double> floatData;
  std::vector<int64_t> intData;
};

/// `tensor` with zeros appended, or its last entries dropped, along
/// dimension `dim` to make `size` there (padding added and stripped).
Tensor withExtent(const Tensor &tensor, int64_t dim, int64_t size);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_TENSOR_H

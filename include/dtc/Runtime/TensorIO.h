//===- TensorIO.h - tensors in numpy .npy files -----------------*- C++ -*-===//
//
// Reading and writing the numpy `.npy` files dtc tools exchange with users.
// Serialized ONNX `TensorProto` files need protobuf and are read by the
// DTCRuntimeONNX library (ONNX/TensorProto.h), which the runtime does not
// link. Every function reports failure through `error`, naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_TENSORIO_H
#define DTC_RUNTIME_TENSORIO_H

#include "dtc/Runtime/Tensor.h"

#include <optional>

namespace mlir::dtc {

std::optional<Tensor> readNpy(const std::string &path, std::string &error);

/// A .npy file's header: its dtype as numpy spells it ("<f4", "<u2"; a
/// native-order '=' written '<'), its shape, and where its data starts.
struct NpyHeader {
  std::string descr;
  Shape shape;
  size_t dataOffset = 0;
};
/// Parses the header at the start of `bytes` (`size` of them, at least the
/// header's); "" or what is wrong.
std::string parseNpyHeader(const char *bytes, size_t size, NpyHeader &out);
/// Writes `tensor` as a version-1 .npy file. bf16 has no numpy dtype and is
/// written as float32 (exactly).
bool writeNpy(const std::string &path, const Tensor &tensor,
              std::string &error);

/// A tensor name made safe as a file name: every character outside
/// [A-Za-z0-9._-] becomes %XX (its byte in upper-case hex).
std::string encodeFileName(const std::string &name);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_TENSORIO_H

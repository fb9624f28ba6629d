//===- TensorIO.h - tensors in .npy and ONNX TensorProto files --*- C++ -*-===//
//
// Reading and writing the tensor files dtc tools exchange with users: numpy
// `.npy` files (read and written) and serialized ONNX `TensorProto` `.pb`
// files (read, so that ONNX test-data directories can be used as they are).
// Every function reports failure through `error`, naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_TENSORIO_H
#define DTC_RUNTIME_TENSORIO_H

#include "dtc/Runtime/Tensor.h"

#include <map>
#include <optional>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace mlir::dtc {

std::optional<Tensor> readNpy(const std::string &path, std::string &error);
/// Writes `tensor` as a version-1 .npy file. bf16 has no numpy dtype and is
/// written as float32 (exactly).
bool writeNpy(const std::string &path, const Tensor &tensor,
              std::string &error);

/// The dtc element type of an ONNX TensorProto data type, if dtc has one.
std::optional<DType> dtypeFromOnnx(int32_t onnxDataType);
/// Decodes a TensorProto held in memory (raw_data or the typed fields).
/// External data is resolved against `baseDir`.
std::optional<Tensor> tensorFromProto(const onnx::TensorProto &proto,
                                      const std::string &baseDir,
                                      std::string &error);
/// Reads a serialized TensorProto; `name` receives its name field.
std::optional<Tensor> readTensorProtoFile(const std::string &path,
                                          std::string &name,
                                          std::string &error);

/// Reads every `.npy` (named by file stem) and `.pb` (named by its name
/// field, or by the stem where that is empty) file in `dir`. As in ONNX
/// test-data sets, `output_*.pb` files are expected outputs and are skipped.
bool readTensorDir(const std::string &dir, std::map<std::string, Tensor> &out,
                   std::string &error);

/// A tensor name made safe as a file name: every character outside
/// [A-Za-z0-9._-] becomes %XX (its byte in upper-case hex).
std::string encodeFileName(const std::string &name);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_TENSORIO_H

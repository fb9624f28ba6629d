//===- TensorProto.h - tensors in ONNX TensorProto files --------*- C++ -*-===//
//
// Decoding ONNX `TensorProto`s: the importer's initializers and constant
// attributes, and the serialized `.pb` files of ONNX test-data directories,
// which dtc tools read as they are. Needs protobuf, so it is a library of its
// own (DTCRuntimeONNX) that the runtime does not link; tools that read input
// directories link it, and `readTensorDir` (both `.npy` and `.pb` files)
// lives here for that reason. Every function reports failure through
// `error`.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_ONNX_TENSORPROTO_H
#define DTC_RUNTIME_ONNX_TENSORPROTO_H

#include "dtc/Runtime/Tensor.h"

#include <map>
#include <optional>
#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace mlir::dtc {

/// The dtc element type of an ONNX TensorProto data type, if dtc has one.
std::optional<DType> dtypeFromOnnx(int32_t onnxDataType);
/// The name of an ONNX TensorProto data type (FLOAT, INT4, FLOAT8E4M3FN,
/// ...), also of those newer than the protobuf definitions dtc links, or
/// its number where ONNX defines none.
std::string onnxTypeName(int32_t onnxDataType);
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
/// field) file in `dir`. As in ONNX test-data sets, `output_*.pb` files are
/// expected outputs and are skipped, and a `.pb` file that names no tensor
/// is filed under its file name: `input_N.pb` is the N-th graph input's
/// (positionalInputKey), as ONNX's backend test runner binds it.
bool readTensorDir(const std::string &dir, std::map<std::string, Tensor> &out,
                   std::string &error);

/// The key of the tensor readTensorDir read from an unnamed `input_N.pb`.
std::string positionalInputKey(size_t index);

/// Files each positional tensor of `tensors` under the name of the input at
/// its position in `inputNames`, unless a tensor of that name was given by
/// name too.
void bindPositionalTensors(std::map<std::string, Tensor> &tensors,
                           const std::vector<std::string> &inputNames);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_ONNX_TENSORPROTO_H

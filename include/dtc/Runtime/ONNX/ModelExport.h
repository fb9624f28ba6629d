//===- ModelExport.h - the trained model as ONNX ----------------*- C++ -*-===//
//
// `dtc-run --export-onnx FILE`: the ONNX model dtc-compile compiled, with
// the initializers of the trained parameters replaced by their values.
// Part of DTCRuntimeONNX, as it needs protobuf.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_ONNX_MODELEXPORT_H
#define DTC_RUNTIME_ONNX_MODELEXPORT_H

#include "dtc/Runtime/Tensor.h"

#include <map>
#include <string>

namespace mlir::dtc {

/// Writes to `outPath` the ONNX model at `modelPath` with each initializer
/// named in `parameters` holding that value, in the initializer's own data
/// type (its shape must be the value's); the rest of the model as it was,
/// but external data read into the file. "" or what is wrong.
std::string exportTrainedModel(const std::string &modelPath,
                               const std::string &outPath,
                               const std::map<std::string, Tensor> &parameters);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_ONNX_MODELEXPORT_H

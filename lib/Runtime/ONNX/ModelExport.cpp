//===- ModelExport.cpp - the trained model as ONNX ------------------------===//

#include "dtc/Runtime/ONNX/ModelExport.h"

#include "dtc/Runtime/ONNX/TensorProto.h"

#include "onnx/onnx_pb.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace mlir::dtc;

namespace {

/// Makes `proto` hold `value` as raw data, dropping its typed and external
/// data (its name, type and dims stay).
void setRawData(onnx::TensorProto &proto, const Tensor &value) {
  std::vector<char> bytes = value.toBytes();
  proto.clear_float_data();
  proto.clear_double_data();
  proto.clear_int32_data();
  proto.clear_int64_data();
  proto.clear_uint64_data();
  proto.clear_string_data();
  proto.clear_external_data();
  proto.clear_data_location();
  proto.set_raw_data(bytes.data(), bytes.size());
}

} // namespace

std::string
mlir::dtc::exportTrainedModel(const std::string &modelPath,
                              const std::string &outPath,
                              const std::map<std::string, Tensor> &parameters) {
  onnx::ModelProto model;
  {
    std::ifstream in(modelPath, std::ios::binary);
    if (!in)
      return "cannot read the model '" + modelPath +
             "' to export: it is where dtc-compile read it (OUT/manifest.json "
             "names it)";
    if (!model.ParseFromIstream(&in))
      return "'" + modelPath + "' is not a readable ONNX model";
  }
  std::string baseDir = std::filesystem::path(modelPath).parent_path().string();
  size_t replaced = 0;
  for (onnx::TensorProto &init :
       *model.mutable_graph()->mutable_initializer()) {
    auto it = parameters.find(init.name());
    std::string error;
    if (it == parameters.end()) {
      // Kept, but external data comes into the file, which may be written
      // anywhere.
      if (init.data_location() != onnx::TensorProto::EXTERNAL)
        continue;
      std::optional<Tensor> value = tensorFromProto(init, baseDir, error);
      if (!value)
        return error;
      setRawData(init, *value);
      continue;
    }
    const Tensor &trained = it->second;
    std::optional<DType> dtype = dtypeFromOnnx(init.data_type());
    Shape dims(init.dims().begin(), init.dims().end());
    if (!dtype || !isFloatDType(*dtype) || dims != trained.shape())
      return "the initializer '" + init.name() + "' is " +
             (dtype ? describe(dims, *dtype) : onnxTypeName(init.data_type())) +
             " but the trained parameter is " +
             describe(trained.shape(), trained.dtype()) +
             ": dtc cannot put it back";
    Tensor value(*dtype, dims);
    value.floats() = trained.floats();
    value.roundToElementType();
    setRawData(init, value);
    ++replaced;
  }
  if (replaced != parameters.size())
    for (const auto &[name, value] : parameters) {
      bool found = false;
      for (const onnx::TensorProto &init : model.graph().initializer())
        found |= init.name() == name;
      if (!found)
        return "the model '" + modelPath + "' has no initializer '" + name +
               "' for the trained parameter of that name";
    }
  if (model.ByteSizeLong() >
      static_cast<size_t>(std::numeric_limits<int>::max()))
    return "the trained model is over protobuf's 2 GB limit for one file: "
           "export its parameters with --export-checkpoint instead";
  errno = 0;
  std::ofstream out(outPath, std::ios::binary | std::ios::trunc);
  if (!out || !model.SerializeToOstream(&out) || !out.flush())
    return "cannot write '" + outPath + "'" +
           (errno ? ": " + std::string(std::strerror(errno)) : "");
  return "";
}

//===- TensorProto.cpp - ONNX TensorProto decoding ------------------------===//

#include "dtc/Runtime/ONNX/TensorProto.h"
#include "dtc/Runtime/TensorIO.h"

#include "onnx/onnx_pb.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace mlir::dtc {

std::optional<DType> dtypeFromOnnx(int32_t onnxDataType) {
  switch (onnxDataType) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT16:
    return DType::I16;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  default:
    return std::nullopt;
  }
}

std::string onnxTypeName(int32_t onnxDataType) {
  // ONNX's own numbering of the types added after the onnx release whose
  // protobuf definitions dtc builds with (Debian's 1.12 ends at BFLOAT16).
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",        "INT4",           "FLOAT4E2M1", "FLOAT8E8M0",
      "UINT2",        "INT2",           "FLOAT6E2M3", "FLOAT6E3M2"};
  constexpr int32_t kFirstNewer = 17;
  if (onnx::TensorProto::DataType_IsValid(onnxDataType) &&
      onnxDataType < kFirstNewer)
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(onnxDataType));
  int32_t i = onnxDataType - kFirstNewer;
  if (i >= 0 && i < static_cast<int32_t>(std::size(newer)))
    return newer[i];
  return "#" + std::to_string(onnxDataType);
}

/// Reads the bytes of an external-data tensor.
static bool readExternal(const onnx::TensorProto &proto,
                         const std::string &baseDir, std::string &bytes,
                         std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : proto.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = std::strtoll(entry.value().c_str(), nullptr, 10);
    else if (entry.key() == "length")
      length = std::strtoll(entry.value().c_str(), nullptr, 10);
  }
  std::string path = (std::filesystem::path(baseDir) / location).string();
  std::ifstream in(path, std::ios::binary);
  if (location.empty() || !in) {
    error = "tensor '" + proto.name() + "': cannot open external data file '" +
            path + "'";
    return false;
  }
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  if (length < 0)
    length = size - offset;
  if (offset < 0 || offset + length > size) {
    error = "tensor '" + proto.name() +
            "': external data range runs past "
            "the end of '" +
            path + "'";
    return false;
  }
  bytes.resize(length);
  in.seekg(offset);
  in.read(bytes.data(), length);
  return static_cast<bool>(in);
}

std::optional<Tensor> tensorFromProto(const onnx::TensorProto &proto,
                                      const std::string &baseDir,
                                      std::string &error) {
  std::optional<DType> dtype = dtypeFromOnnx(proto.data_type());
  std::string name = "tensor '" + proto.name() + "'";
  if (!dtype) {
    error = name + ": unsupported element type " +
            onnxTypeName(proto.data_type());
    return std::nullopt;
  }
  // Element counts are checked against the data before anything is
  // allocated, so a corrupt file cannot ask for absurd amounts of memory.
  constexpr int64_t kMaxElements = int64_t(1) << 40;
  Shape shape;
  int64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0 || dim > kMaxElements ||
        (dim > 0 && count > kMaxElements / dim)) {
      error = name + ": invalid dimension " + std::to_string(dim);
      return std::nullopt;
    }
    count *= dim;
    shape.push_back(dim);
  }
  auto wrongCount = [&](int64_t found) {
    error = name + ": holds " + std::to_string(found) + " values but shape " +
            describe(shape, *dtype) + " needs " + std::to_string(count);
    return std::nullopt;
  };

  std::string external;
  const std::string *raw = proto.has_raw_data() ? &proto.raw_data() : nullptr;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!readExternal(proto, baseDir, external, error))
      return std::nullopt;
    raw = &external;
  }
  if (raw) {
    if (static_cast<int64_t>(raw->size()) !=
        count * static_cast<int64_t>(dtypeSize(*dtype)))
      return wrongCount(raw->size() / dtypeSize(*dtype));
    return Tensor::fromBytes(*dtype, shape, raw->data());
  }

  int64_t stored = *dtype == DType::F32   ? proto.float_data_size()
                   : *dtype == DType::F64 ? proto.double_data_size()
                   : *dtype == DType::I64 ? proto.int64_data_size()
                                          : proto.int32_data_size();
  if (stored != count)
    return wrongCount(stored);
  Tensor tensor(*dtype, shape);
  switch (*dtype) {
  case DType::F32:
    for (int64_t i = 0; i < count; ++i)
      tensor.floats()[i] = proto.float_data(i);
    break;
  case DType::F64:
    for (int64_t i = 0; i < count; ++i)
      tensor.floats()[i] = proto.double_data(i);
    break;
  case DType::I64:
    for (int64_t i = 0; i < count; ++i)
      tensor.ints()[i] = proto.int64_data(i);
    break;
  case DType::F16:
  case DType::BF16: {
    // int32_data holds the 16-bit patterns.
    std::vector<char> bytes(2 * count);
    for (int64_t i = 0; i < count; ++i) {
      uint16_t bits = static_cast<uint16_t>(proto.int32_data(i));
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    }
    return Tensor::fromBytes(*dtype, shape, bytes.data());
  }
  default:
    for (int64_t i = 0; i < count; ++i)
      tensor.ints()[i] = proto.int32_data(i);
    tensor.roundToElementType();
    break;
  }
  return tensor;
}

std::optional<Tensor> readTensorProtoFile(const std::string &path,
                                          std::string &name,
                                          std::string &error) {
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto proto;
  if (!in) {
    error = path + ": cannot open";
    return std::nullopt;
  }
  if (!proto.ParseFromIstream(&in)) {
    error = path + ": not a valid ONNX TensorProto (truncated or corrupt)";
    return std::nullopt;
  }
  name = proto.name();
  std::optional<Tensor> tensor = tensorFromProto(
      proto, std::filesystem::path(path).parent_path().string(), error);
  if (!tensor)
    error = path + ": " + error;
  return tensor;
}

bool readTensorDir(const std::string &dir, std::map<std::string, Tensor> &out,
                   std::string &error) {
  // TensorProto files, but not an ONNX test case's expected outputs.
  auto readProto = [](const std::string &path, std::string &name,
                      std::optional<Tensor> &tensor, std::string &error) {
    std::filesystem::path file(path);
    if (file.extension() != ".pb" || name.rfind("output_", 0) == 0)
      return false;
    std::string protoName;
    tensor = readTensorProtoFile(path, protoName, error);
    name = protoName.empty() ? file.filename().string() : protoName;
    return true;
  };
  return readTensorDirectory(dir, out, error, readProto);
}

std::string positionalInputKey(size_t index) {
  return "input_" + std::to_string(index) + ".pb";
}

void bindPositionalTensors(std::map<std::string, Tensor> &tensors,
                           const std::vector<std::string> &inputNames) {
  for (size_t i = 0; i < inputNames.size(); ++i) {
    auto it = tensors.find(positionalInputKey(i));
    if (it == tensors.end())
      continue;
    Tensor tensor = std::move(it->second);
    tensors.erase(it);
    tensors.try_emplace(inputNames[i], std::move(tensor));
  }
}

} // namespace mlir::dtc

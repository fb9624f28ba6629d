//===- Npy.cpp - numpy .npy files -----------------------------------------===//
//
// Format: "\x93NUMPY", version (major, minor), header length (2 bytes in
// version 1, 4 bytes in versions 2 and 3), a Python dict literal with
// 'descr', 'fortran_order' and 'shape', then the raw elements.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/TensorIO.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mlir::dtc {

namespace {
struct NpyDType {
  const char *descr;
  DType dtype;
};
} // namespace

// bf16 is absent: it is written as f4 (see writeNpy).
static const NpyDType kNpyDTypes[] = {
    {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16},
    {"<i8", DType::I64}, {"<i4", DType::I32}, {"<i2", DType::I16},
    {"|i1", DType::I8},  {"|u1", DType::U8},  {"|b1", DType::Bool}};

/// The text after `'key':` in a header dict, or npos.
static size_t findValue(const std::string &header, const char *key) {
  size_t pos = header.find(std::string("'") + key + "'");
  if (pos == std::string::npos)
    return pos;
  pos = header.find(':', pos);
  if (pos == std::string::npos)
    return pos;
  return header.find_first_not_of(' ', pos + 1);
}

std::string parseNpyHeader(const char *bytes, size_t size, NpyHeader &out) {
  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0)
    return "missing the \\x93NUMPY magic";
  int major = static_cast<unsigned char>(bytes[6]);
  size_t lenBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || size < 8 + lenBytes)
    return "unsupported version " + std::to_string(major);
  size_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i]))
                 << (8 * i);
  out.dataOffset = 8 + lenBytes + headerLen;
  if (out.dataOffset > size)
    return "header runs past the end of the file";
  std::string header(bytes + 8 + lenBytes, headerLen);

  size_t descrPos = findValue(header, "descr");
  size_t fortranPos = findValue(header, "fortran_order");
  size_t shapePos = findValue(header, "shape");
  if (descrPos == std::string::npos || fortranPos == std::string::npos ||
      shapePos == std::string::npos || header[descrPos] != '\'' ||
      header[shapePos] != '(')
    return "header lacks descr, fortran_order or shape";
  out.descr = header.substr(descrPos + 1,
                            header.find('\'', descrPos + 1) - descrPos - 1);
  if (!out.descr.empty() && out.descr[0] == '=')
    out.descr = "<" + out.descr.substr(1);
  if (header.compare(fortranPos, 4, "True") == 0)
    return "fortran_order arrays are not supported; save with "
           "np.ascontiguousarray";
  out.shape.clear();
  std::string dims =
      header.substr(shapePos + 1, header.find(')', shapePos) - shapePos - 1);
  std::stringstream dimStream(dims);
  std::string item;
  while (std::getline(dimStream, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos)
      continue;
    char *end = nullptr;
    out.shape.push_back(std::strtoll(item.c_str(), &end, 10));
    if (end == item.c_str() || end[strspn(end, " L")] != '\0')
      return "bad shape entry '" + item + "'";
    if (out.shape.back() < 0)
      return "negative dimension";
  }
  return "";
}

std::optional<Tensor> readNpy(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open";
    return std::nullopt;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  auto fail = [&](const std::string &why) {
    error = path + ": not a valid .npy file: " + why;
    return std::nullopt;
  };
  NpyHeader header;
  if (std::string why = parseNpyHeader(bytes.data(), bytes.size(), header);
      !why.empty())
    return fail(why);
  const NpyDType *match = nullptr;
  for (const NpyDType &candidate : kNpyDTypes)
    if (header.descr == candidate.descr)
      match = &candidate;
  if (!match)
    return fail("unsupported dtype '" + header.descr + "'");
  const Shape &shape = header.shape;
  size_t dataStart = header.dataOffset;
  // Compare the header's element count with the data before allocating.
  size_t dataBytes = bytes.size() - dataStart,
         expected = dtypeSize(match->dtype);
  for (int64_t dim : shape) {
    if (dim > 0 && expected > dataBytes / dim + 1)
      return fail("shape " + describe(shape, match->dtype) +
                  " needs more data than the file holds");
    expected *= dim;
  }
  if (bytes.size() - dataStart != expected)
    return fail("expected " + std::to_string(expected) +
                " data bytes for shape " + describe(shape, match->dtype) +
                ", found " + std::to_string(bytes.size() - dataStart));
  return Tensor::fromBytes(match->dtype, shape, bytes.data() + dataStart);
}

bool writeNpy(const std::string &path, const Tensor &tensor,
              std::string &error) {
  const Tensor *source = &tensor;
  Tensor widened;
  if (tensor.dtype() == DType::BF16) {
    widened = Tensor(DType::F32, tensor.shape());
    widened.floats() = tensor.floats();
    source = &widened;
  }
  const char *descr = nullptr;
  for (const NpyDType &candidate : kNpyDTypes)
    if (candidate.dtype == source->dtype())
      descr = candidate.descr;
  std::string shape;
  for (int64_t dim : source->shape())
    shape += std::to_string(dim) + ", ";
  if (source->rank() > 1)
    shape.resize(shape.size() - 1); // (2, 3) but (4,)
  else if (source->rank() == 1)
    shape.pop_back();
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = path + ": cannot open for writing";
    return false;
  }
  uint16_t len = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(static_cast<char>(len & 0xff));
  out.put(static_cast<char>(len >> 8));
  out << header;
  std::vector<char> data = source->toBytes();
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) {
    error = path + ": write failed";
    return false;
  }
  return true;
}

std::string encodeFileName(const std::string &name) {
  static const char *hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

} // namespace mlir::dtc

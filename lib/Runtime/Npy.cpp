//===- Npy.cpp - numpy .npy files -----------------------------------------===//
//
// Format: "\x93NUMPY", version (major, minor), header length (2 bytes in
// version 1, 4 bytes in versions 2 and 3), a Python dict literal with
// 'descr', 'fortran_order' and 'shape', then the raw elements.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/TensorIO.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

bool readTensorDirectory(const std::string &dir,
                         std::map<std::string, Tensor> &out, std::string &error,
                         const TensorFileReader &other) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    error = dir + ": cannot read directory: " + ec.message();
    return false;
  }
  for (const auto &entry : it) {
    std::filesystem::path path = entry.path();
    std::string name = path.stem().string();
    std::optional<Tensor> tensor;
    if (path.extension() == ".npy") {
      tensor = readNpy(path.string(), error);
    } else if (!other || !other(path.string(), name, tensor, error)) {
      if (!error.empty())
        return false;
      continue;
    }
    if (!tensor)
      return false;
    if (out.count(name)) {
      error = dir + ": two files hold a tensor named '" + name + "'";
      return false;
    }
    out.emplace(name, std::move(*tensor));
  }
  return true;
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

MappedArray::~MappedArray() {
  if (mapping)
    munmap(mapping, mappedBytes);
}

std::string MappedArray::open(const std::string &path,
                              const std::string &rawDescr) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return std::strerror(errno);
  struct stat info;
  if (fstat(fd, &info) != 0) {
    int statError = errno;
    ::close(fd);
    return std::strerror(statError);
  }
  if (!S_ISREG(info.st_mode) || info.st_size == 0) {
    ::close(fd);
    return S_ISDIR(info.st_mode)   ? "it is a directory"
           : S_ISREG(info.st_mode) ? "it is empty"
                                   : "it is not a regular file";
  }
  mappedBytes = static_cast<size_t>(info.st_size);
  mapping = mmap(nullptr, mappedBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  int mapError = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) {
    mapping = nullptr;
    return std::string("cannot map it: ") + std::strerror(mapError);
  }
  const char *bytes = static_cast<const char *>(mapping);
  size_t offset = 0;
  if (rawDescr.empty()) {
    NpyHeader header;
    if (std::string why = parseNpyHeader(bytes, mappedBytes, header);
        !why.empty())
      return "not a valid .npy file: " + why;
    elementDescr = header.descr;
    arrayShape = header.shape;
    offset = header.dataOffset;
  } else {
    elementDescr = rawDescr;
  }
  // "<f4", "|u1": byte order, kind, width.
  if (elementDescr.size() != 3 || elementDescr[0] == '>' ||
      std::string("fiub").find(elementDescr[1]) == std::string::npos ||
      std::string("1248").find(elementDescr[2]) == std::string::npos ||
      (elementDescr[1] == 'f' && elementDescr[2] == '1'))
    return "an unsupported element type '" + elementDescr + "'";
  kind = elementDescr[1];
  width = elementDescr[2] - '0';
  data = bytes + offset;
  size_t payload = mappedBytes - offset;
  if (!rawDescr.empty()) {
    if (payload % width)
      return "it ends in the middle of an element (" + std::to_string(payload) +
             " bytes of " + std::to_string(width) + "-byte elements)";
    count = static_cast<int64_t>(payload / width);
    arrayShape = {count};
    return "";
  }
  // (Dimension by dimension: an absurd header must not overflow.)
  size_t fits = payload / width, elements = 1;
  for (int64_t dim : arrayShape) {
    if (dim > 0 && elements > fits / static_cast<size_t>(dim))
      return "it is truncated: " + describe(arrayShape) + " of " +
             elementDescr + " needs more than its " + std::to_string(payload) +
             " data bytes";
    elements *= static_cast<size_t>(dim);
  }
  if (payload != elements * width)
    return "it holds " + std::to_string(payload) + " data bytes, not the " +
           std::to_string(elements * width) + " of " + describe(arrayShape) +
           " of " + elementDescr;
  count = static_cast<int64_t>(elements);
  return "";
}

int64_t MappedArray::intAt(int64_t i) const {
  const char *p = data + i * width;
  uint64_t bits = 0;
  std::memcpy(&bits, p, width); // little-endian
  if (kind != 'i' || width == 8)
    return static_cast<int64_t>(bits);
  int shift = 64 - 8 * width; // sign-extend
  return static_cast<int64_t>(bits << shift) >> shift;
}

double MappedArray::at(int64_t i) const {
  if (kind != 'f')
    return static_cast<double>(intAt(i));
  const char *p = data + i * width;
  switch (width) {
  case 2: {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return floatFromHalfBits(bits, DType::F16);
  }
  case 4: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}

void MappedArray::adviseRandom() const {
  if (mapping)
    madvise(mapping, mappedBytes, MADV_RANDOM);
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

std::string decodeFileName(const std::string &encoded) {
  std::string out;
  for (size_t c = 0; c < encoded.size(); ++c) {
    if (encoded[c] == '%' && c + 2 < encoded.size() &&
        std::isxdigit(static_cast<unsigned char>(encoded[c + 1])) &&
        std::isxdigit(static_cast<unsigned char>(encoded[c + 2]))) {
      out +=
          static_cast<char>(std::stoi(encoded.substr(c + 1, 2), nullptr, 16));
      c += 2;
    } else {
      out += encoded[c];
    }
  }
  return out;
}

} // namespace mlir::dtc

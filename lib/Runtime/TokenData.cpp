//===- TokenData.cpp - training windows from a flat token file ------------===//

#include "dtc/Runtime/TokenData.h"

#include "dtc/Runtime/TensorIO.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir::dtc;

namespace {

/// SplitMix64: a small generator whose sequence is fixed by its seed on
/// every platform (std::shuffle's is not).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n), n > 0 (rejection keeps it unbiased).
  uint64_t below(uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
      x = next();
    while (x >= limit);
    return x % n;
  }
};

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

TokenData::~TokenData() {
  if (mapping)
    munmap(mapping, mappedBytes);
}

std::string TokenData::open(const std::string &file,
                            const std::string &rawType) {
  path = file;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return "cannot open the data file '" + path + "': " + std::strerror(errno);
  struct stat info;
  if (fstat(fd, &info) != 0 || info.st_size == 0) {
    ::close(fd);
    return "the data file '" + path + "' is empty";
  }
  mappedBytes = static_cast<size_t>(info.st_size);
  mapping = mmap(nullptr, mappedBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping == MAP_FAILED) {
    mapping = nullptr;
    return "cannot map the data file '" + path + "': " + std::strerror(errno);
  }
  const char *bytes = static_cast<const char *>(mapping);
  size_t offset = 0;
  std::string descr;
  if (endsWith(path, ".npy")) {
    NpyHeader header;
    if (std::string why = parseNpyHeader(bytes, mappedBytes, header);
        !why.empty())
      return "the data file '" + path + "' is not a valid .npy file: " + why;
    if (header.shape.size() != 1)
      return "the data file '" + path + "' holds an array of shape " +
             describe(header.shape, DType::I64) + ": tokens are a 1-D array";
    descr = header.descr;
    offset = header.dataOffset;
  } else if (rawType == "uint16" || rawType == "int32") {
    descr = rawType == "uint16" ? "<u2" : "<i4";
  } else {
    return "unknown --data-type '" + rawType + "' (uint16, int32)";
  }
  struct Kind {
    const char *descr;
    int bytes;
    bool isSigned;
  };
  static const Kind kinds[] = {{"<u2", 2, false},
                               {"<i2", 2, true},
                               {"<i4", 4, true},
                               {"<u4", 4, false},
                               {"<i8", 8, true}};
  const Kind *kind = nullptr;
  for (const Kind &k : kinds)
    if (descr == k.descr)
      kind = &k;
  if (!kind)
    return "the data file '" + path + "' holds '" + descr +
           "' elements: tokens are uint16, int16, int32, uint32 or int64";
  elementBytes = kind->bytes;
  isSigned = kind->isSigned;
  data = reinterpret_cast<const unsigned char *>(bytes) + offset;
  size_t payload = mappedBytes - offset;
  if (payload % elementBytes)
    return "the data file '" + path + "' ends in the middle of a token (" +
           std::to_string(payload) + " bytes of " +
           std::to_string(elementBytes) + "-byte tokens)";
  count = static_cast<int64_t>(payload / elementBytes);
  // Windows are read in an order of their own: no read-ahead.
  madvise(mapping, mappedBytes, MADV_RANDOM);
  return "";
}

int64_t TokenData::windows(int64_t sequence) const {
  return sequence > 0 && count > sequence ? (count - 1) / sequence : 0;
}

int64_t TokenData::at(int64_t index) const {
  const unsigned char *p = data + index * elementBytes;
  switch (elementBytes) {
  case 2: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return isSigned ? static_cast<int16_t>(v) : v;
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return isSigned ? static_cast<int64_t>(static_cast<int32_t>(v)) : v;
  }
  default: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}

int64_t TokenData::window(int64_t n, int64_t windows, uint64_t seed) {
  int64_t wanted = n / windows;
  if (wanted != pass) {
    // Fisher-Yates from a generator keyed on (seed, pass).
    order.resize(windows);
    for (int64_t i = 0; i < windows; ++i)
      order[i] = i;
    SplitMix64 rng{seed * 0x100000001B3ull + static_cast<uint64_t>(wanted)};
    for (int64_t i = windows - 1; i > 0; --i)
      std::swap(order[i], order[rng.below(i + 1)]);
    pass = wanted;
  }
  return order[n % windows];
}

std::string TokenData::batch(int64_t step, int64_t rows, int64_t sequence,
                             std::optional<uint64_t> seed, int64_t vocabulary,
                             Tensor &ids, Tensor &labels) {
  int64_t total = windows(sequence);
  if (total == 0)
    return "the data file '" + path + "' holds " + std::to_string(count) +
           " tokens, fewer than one window of " + std::to_string(sequence + 1) +
           " (the compiled sequence length plus the next token)";
  ids = Tensor(DType::I64, {rows, sequence});
  labels = Tensor(DType::I64, {rows, sequence});
  for (int64_t r = 0; r < rows; ++r) {
    int64_t n = step * rows + r;
    int64_t start = (seed ? window(n, total, *seed) : n % total) * sequence;
    for (int64_t t = 0; t <= sequence; ++t) {
      int64_t token = at(start + t);
      if (token < 0 || (vocabulary > 0 && token >= vocabulary))
        return "the data file '" + path + "' holds token " +
               std::to_string(token) + " at token offset " +
               std::to_string(start + t) + " (byte " +
               std::to_string(
                   (data - static_cast<const unsigned char *>(mapping)) +
                   (start + t) * elementBytes) +
               "), outside the vocabulary [0, " + std::to_string(vocabulary) +
               ")";
      if (t < sequence)
        ids.ints()[r * sequence + t] = token;
      if (t > 0)
        labels.ints()[r * sequence + t - 1] = token;
    }
  }
  return "";
}

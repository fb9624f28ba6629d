//===- TokenData.cpp - training windows from a flat token file ------------===//

#include "dtc/Runtime/TokenData.h"

#include <algorithm>
#include <iterator>

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

std::string TokenData::open(const std::string &file,
                            const std::string &rawType) {
  path = file;
  std::string raw;
  if (!endsWith(path, ".npy")) {
    if (rawType != "uint16" && rawType != "int32")
      return "unknown --data-type '" + rawType + "' (uint16, int32)";
    raw = rawType == "uint16" ? "<u2" : "<i4";
  }
  if (std::string why = tokens.open(path, raw); !why.empty())
    return "the data file '" + path + "': " + why;
  if (tokens.shape().size() != 1)
    return "the data file '" + path + "' holds an array of shape " +
           describe(tokens.shape()) + ": tokens are a 1-D array";
  static const char *const kTokenTypes[] = {"<u2", "<i2", "<i4", "<u4", "<i8"};
  if (std::find(std::begin(kTokenTypes), std::end(kTokenTypes),
                tokens.descr()) == std::end(kTokenTypes))
    return "the data file '" + path + "' holds '" + tokens.descr() +
           "' elements: tokens are uint16, int16, int32, uint32 or int64";
  // Windows are read in an order of their own: no read-ahead.
  tokens.adviseRandom();
  return "";
}

int64_t TokenData::windows(int64_t sequence) const {
  int64_t count = tokens.size();
  return sequence > 0 && count > sequence ? (count - 1) / sequence : 0;
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
    return "the data file '" + path + "' holds " +
           std::to_string(tokens.size()) +
           " tokens, fewer than one window of " + std::to_string(sequence + 1) +
           " (the compiled sequence length plus the next token)";
  ids = Tensor(DType::I64, {rows, sequence});
  labels = Tensor(DType::I64, {rows, sequence});
  for (int64_t r = 0; r < rows; ++r) {
    int64_t n = step * rows + r;
    int64_t start = (seed ? window(n, total, *seed) : n % total) * sequence;
    for (int64_t t = 0; t <= sequence; ++t) {
      int64_t token = tokens.intAt(start + t);
      if (token < 0 || (vocabulary > 0 && token >= vocabulary))
        return "the data file '" + path + "' holds token " +
               std::to_string(token) + " at token offset " +
               std::to_string(start + t) + " (byte " +
               std::to_string(tokens.byteOffset(start + t)) +
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

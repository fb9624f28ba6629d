//===- TokenData.h - training windows from a flat token file ----*- C++ -*-===//
//
// `dtc-run OUT --data FILE`: a flat file of token ids (nanoGPT's train.bin:
// raw uint16 or int32; or a 1-D .npy of uint16, int16, int32, uint32 or
// int64), memory-mapped, so that a step reads its windows only. A window
// is S + 1 consecutive tokens (S the compiled sequence length): the ids are
// its first S, the labels its last S. Window w starts at token w * S, so
// the file holds (tokens - 1) / S of them; they are taken in an order
// drawn from the seed, a new permutation each pass over the file, and
// global row b of step k is window number k * B + b of that sequence (B
// the global batch). The windows of a step are thus the same on every
// mesh, and a run resumed at step k reads what the uninterrupted run would.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_TOKENDATA_H
#define DTC_RUNTIME_TOKENDATA_H

#include "dtc/Runtime/TensorIO.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::dtc {

class TokenData {
public:
  /// Maps `path`; `rawType` ("uint16" or "int32") says how to read a file
  /// that is not .npy. "" or what is wrong, naming the file.
  std::string open(const std::string &path, const std::string &rawType);

  /// The ids and labels ([rows, sequence], i64) of global rows [0, rows) of
  /// step `step`, windows in the order drawn from `seed` (none: in the
  /// file's order, wrapping around, as evaluation reads them); "" or what
  /// is wrong: a token outside [0, vocabulary) (vocabulary 0: unchecked),
  /// naming its offset in the file.
  std::string batch(int64_t step, int64_t rows, int64_t sequence,
                    std::optional<uint64_t> seed, int64_t vocabulary,
                    Tensor &ids, Tensor &labels);

  /// The tokens the file holds.
  int64_t size() const { return tokens.size(); }

private:
  /// The windows of `sequence` tokens the file holds (0: shorter than one).
  int64_t windows(int64_t sequence) const;
  /// Window number `n` of the sequence drawn from `seed`.
  int64_t window(int64_t n, int64_t windows, uint64_t seed);

  std::string path;
  MappedArray tokens;
  /// The current pass's permutation, and which pass it is (-1: none).
  std::vector<int64_t> order;
  int64_t pass = -1;
};

} // namespace mlir::dtc

#endif // DTC_RUNTIME_TOKENDATA_H

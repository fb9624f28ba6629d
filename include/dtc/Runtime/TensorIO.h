//===- TensorIO.h - tensors in numpy .npy files -----------------*- C++ -*-===//
//
// Reading and writing the numpy `.npy` files dtc tools exchange with users.
// Serialized ONNX `TensorProto` files need protobuf and are read by the
// DTCRuntimeONNX library (ONNX/TensorProto.h), which the runtime does not
// link. Every function reports failure through `error`, naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_TENSORIO_H
#define DTC_RUNTIME_TENSORIO_H

#include "dtc/Runtime/Tensor.h"

#include <functional>
#include <map>
#include <optional>

namespace mlir::dtc {

std::optional<Tensor> readNpy(const std::string &path, std::string &error);

/// Reads another kind of file of a tensor directory: sets `name` (the
/// file's stem by default) and returns true with `tensor` read (or false
/// with `error`), or returns false with `tensor` unset and no error to
/// skip the file.
using TensorFileReader =
    std::function<bool(const std::string &path, std::string &name,
                       std::optional<Tensor> &tensor, std::string &error)>;

/// The tensors of directory `dir` by name: its .npy files (named by their
/// stem) and what `other` reads of the rest. Two files of one name are an
/// error.
bool readTensorDirectory(const std::string &dir,
                         std::map<std::string, Tensor> &out, std::string &error,
                         const TensorFileReader &other = {});

/// A .npy file's header: its dtype as numpy spells it ("<f4", "<u2"; a
/// native-order '=' written '<'), its shape, and where its data starts.
struct NpyHeader {
  std::string descr;
  Shape shape;
  size_t dataOffset = 0;
};
/// Parses the header at the start of `bytes` (`size` of them, at least the
/// header's); "" or what is wrong.
std::string parseNpyHeader(const char *bytes, size_t size, NpyHeader &out);
/// A file of array elements mapped read-only and read in place, so that a
/// reader touches only the elements it needs (token windows, a rank's
/// slice of a checkpoint part): a .npy file, or raw elements.
class MappedArray {
public:
  MappedArray() = default;
  ~MappedArray();
  MappedArray(const MappedArray &) = delete;
  MappedArray &operator=(const MappedArray &) = delete;

  /// Maps `path`: a .npy file if `rawDescr` is empty, else raw elements of
  /// that numpy dtype ("<u2", "<i4"). "" or what is wrong (not naming the
  /// file: callers say what it is for).
  std::string open(const std::string &path, const std::string &rawDescr = "");

  /// The elements' numpy dtype and the header's shape (raw: 1-D).
  const std::string &descr() const { return elementDescr; }
  const Shape &shape() const { return arrayShape; }
  int64_t size() const { return count; }
  /// The byte offset of element `i` in the file.
  size_t byteOffset(int64_t i) const {
    return static_cast<size_t>(data - static_cast<const char *>(mapping)) +
           static_cast<size_t>(i) * width;
  }
  /// Element `i` (row-major) of an integer dtype exactly, of any as a
  /// double.
  int64_t intAt(int64_t i) const;
  double at(int64_t i) const;
  /// The elements will be read in no particular order: no read-ahead.
  void adviseRandom() const;

private:
  void *mapping = nullptr;
  size_t mappedBytes = 0;
  const char *data = nullptr;
  std::string elementDescr;
  Shape arrayShape;
  int64_t count = 0;
  int width = 0;
  char kind = 'f'; // numpy's: 'f', 'i', 'u' or 'b'
};

/// Writes `tensor` as a version-1 .npy file. bf16 has no numpy dtype and is
/// written as float32 (exactly).
bool writeNpy(const std::string &path, const Tensor &tensor,
              std::string &error);

/// A tensor name made safe as a file name (or a name or reason as a
/// space-separated field of program.txt): every character outside
/// [A-Za-z0-9._-] becomes %XX (its byte in upper-case hex).
std::string encodeFileName(const std::string &name);
/// The name `encodeFileName` encoded.
std::string decodeFileName(const std::string &encoded);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_TENSORIO_H

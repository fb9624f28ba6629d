//===- Communicator.cpp - collectives over a device mesh ------------------===//
//
// What every engine shares: the mesh's rank layout, the arrangement of
// tensors into the contiguous blocks collectives move, and the traffic
// count. Engines only move bytes.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/Communicator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

namespace mlir::dtc {

int64_t MeshShape::numDevices() const {
  int64_t n = 1;
  for (int64_t size : sizes)
    n *= size;
  return n;
}

std::string MeshShape::checkLaunchedRanks(int64_t ranks) const {
  if (ranks == numDevices())
    return "";
  std::string shape;
  for (size_t i = 0; i < axes.size(); ++i)
    shape += (i ? "," : "") + axes[i] + "=" + std::to_string(sizes[i]);
  return "the mesh " + shape + " has " + std::to_string(numDevices()) +
         " devices but " + std::to_string(ranks) +
         (ranks == 1 ? " rank was" : " ranks were") + " launched (mpirun -np " +
         std::to_string(numDevices()) + ")";
}

int64_t MeshShape::axisIndex(const std::string &axis) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] == axis)
      return i;
  return -1;
}

std::vector<int64_t> MeshShape::coordinates(int64_t rank) const {
  std::vector<int64_t> coords(axes.size());
  for (int64_t i = static_cast<int64_t>(axes.size()) - 1; i >= 0; --i) {
    coords[i] = rank % sizes[i];
    rank /= sizes[i];
  }
  return coords;
}

int64_t MeshShape::rankAt(const std::vector<int64_t> &coordinates) const {
  int64_t rank = 0;
  for (size_t i = 0; i < axes.size(); ++i)
    rank = rank * sizes[i] + coordinates[i];
  return rank;
}

std::string MeshShape::parse(const std::string &spec, MeshShape &mesh) {
  mesh = MeshShape();
  std::stringstream stream(spec);
  std::string entry;
  while (std::getline(stream, entry, ',')) {
    size_t eq = entry.find('=');
    char *end = nullptr;
    long long size = eq == std::string::npos
                         ? 0
                         : std::strtoll(entry.c_str() + eq + 1, &end, 10);
    if (eq == 0 || eq == std::string::npos || size < 1 || *end != '\0')
      return "bad mesh axis '" + entry + "' (expected NAME=SIZE, e.g. dp=2)";
    std::string name = entry.substr(0, eq);
    if (mesh.axisIndex(name) >= 0)
      return "mesh axis '" + name + "' is given twice";
    mesh.axes.push_back(name);
    mesh.sizes.push_back(size);
  }
  if (mesh.axes.empty())
    return "empty mesh";
  return "";
}

const char *collectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Broadcast:
    return "broadcast";
  case CollectiveKind::SendRecv:
    return "send_recv";
  }
  return "?";
}

PendingCollective::~PendingCollective() = default;
Communicator::~Communicator() = default;

/// Collectives are called by compiled code: a malformed call is a compiler
/// bug, reported and fatal.
[[noreturn]] static void fatal(const std::string &message) {
  std::fprintf(stderr, "dtc runtime error: %s\n", message.c_str());
  std::abort();
}

int64_t Communicator::groupSize(const std::vector<std::string> &axes) const {
  int64_t n = 1;
  for (const std::string &axis : axes) {
    int64_t index = meshShape.axisIndex(axis);
    if (index < 0)
      fatal("no mesh axis '" + axis + "'");
    n *= meshShape.sizes[index];
  }
  return n;
}

static bool contains(const std::vector<std::string> &axes,
                     const std::string &axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

/// Row-major index of `rank`'s coordinates on the mesh axes that are
/// (`inAxes`) or are not in `axes`, in mesh order.
static int64_t coordinateIndex(const MeshShape &mesh, int64_t rank,
                               const std::vector<std::string> &axes,
                               bool inAxes) {
  std::vector<int64_t> coords = mesh.coordinates(rank);
  int64_t index = 0;
  for (size_t i = 0; i < mesh.axes.size(); ++i)
    if (contains(axes, mesh.axes[i]) == inAxes)
      index = index * mesh.sizes[i] + coords[i];
  return index;
}

int64_t Communicator::groupRank(const std::vector<std::string> &axes) const {
  return coordinateIndex(meshShape, rank(), axes, /*inAxes=*/true);
}

int64_t Communicator::groupId(const std::vector<std::string> &axes) const {
  return coordinateIndex(meshShape, rank(), axes, /*inAxes=*/false);
}

std::string Communicator::groupKey(const std::vector<std::string> &axes) const {
  std::string key;
  for (const std::string &axis : meshShape.axes)
    if (contains(axes, axis))
      key += axis + ",";
  return key;
}

std::vector<int64_t>
Communicator::groupMembers(const std::vector<std::string> &axes) const {
  std::vector<int64_t> members;
  int64_t id = groupId(axes);
  for (int64_t r = 0, e = meshShape.numDevices(); r < e; ++r)
    if (coordinateIndex(meshShape, r, axes, /*inAxes=*/false) == id)
      members.push_back(r);
  return members;
}

bool Communicator::anyRank(bool flag) {
  double value = flag ? 1 : 0;
  allReduceBytes(&value, 1, DType::F64, meshShape.axes, ReduceKind::Max);
  return value != 0;
}

std::vector<double> Communicator::everyRank(const std::vector<double> &values) {
  std::vector<double> all(values.size() * worldSize());
  allGatherBytes(values.data(), all.data(), values.size() * sizeof(double),
                 meshShape.axes);
  return all;
}

void Communicator::sumOver(std::vector<double> &values,
                           const std::vector<std::string> &axes) {
  if (!axes.empty())
    allReduceBytes(values.data(), values.size(), DType::F64, axes,
                   ReduceKind::Sum);
}

void Communicator::count(CollectiveKind kind, double busBytes) {
  CollectiveCount &entry = traffic[kind];
  ++entry.calls;
  entry.busBytes += busBytes;
}

namespace {

/// A tensor viewed as [outer, size, inner] around dimension `dim`, with
/// elements of `width` bytes.
struct Split3 {
  int64_t outer = 1, size, inner = 1;
  size_t width;
  Split3(const Shape &shape, int64_t dim, DType dtype)
      : size(shape[dim]), width(dtypeSize(dtype)) {
    for (int64_t i = 0; i < dim; ++i)
      outer *= shape[i];
    for (size_t i = dim + 1; i < shape.size(); ++i)
      inner *= shape[i];
  }
  size_t bytes() const { return outer * size * inner * width; }
};

/// Copies chunk `r` of `n` along the split dimension of `in` to `out`.
void copyChunk(const char *in, char *out, const Split3 &s, int64_t n,
               int64_t r) {
  size_t piece = s.size / n * s.inner * s.width;
  for (int64_t o = 0; o < s.outer; ++o)
    std::memcpy(out + o * piece,
                in + ((o * s.size + r * (s.size / n)) * s.inner) * s.width,
                piece);
}

/// `in`'s `n` chunks along the split dimension one after the other (the
/// blocks a reduce-scatter or all-to-all moves): `in` itself when that
/// dimension is the outermost, else a rearranged copy in `staging`.
const void *inChunkOrder(const void *in, const Split3 &s, int64_t n,
                         std::vector<char> &staging) {
  if (s.outer == 1)
    return in;
  staging.resize(s.bytes());
  for (int64_t r = 0; r < n; ++r)
    copyChunk(static_cast<const char *>(in),
              staging.data() + r * (s.bytes() / n), s, n, r);
  return staging.data();
}

/// The inverse of inChunkOrder: `n` blocks, each a tensor split as `s`,
/// concatenated along the split dimension.
void concatBlocks(const char *blocks, char *out, const Split3 &s, int64_t n) {
  size_t row = s.size * s.inner * s.width;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < s.outer; ++o)
      std::memcpy(out + (o * n + r) * row, blocks + r * s.bytes() + o * row,
                  row);
}

void checkDim(const Shape &shape, int64_t dim, const char *what) {
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    fatal(std::string(what) + ": no dimension " + std::to_string(dim));
}

void checkChunks(const Shape &shape, DType dtype, int64_t dim, int64_t n,
                 const char *what) {
  checkDim(shape, dim, what);
  if (shape[dim] % n != 0)
    fatal(std::string(what) + ": dimension " + std::to_string(dim) + " of " +
          describe(shape, dtype) + " does not split into " + std::to_string(n) +
          " chunks");
}

/// Whether the `elements` elements at `row` are all zero (as numbers: a
/// float's -0 too).
bool isZeroRow(const char *row, int64_t elements, DType dtype) {
  auto all = [&](auto zeroMask) {
    using Bits = decltype(zeroMask);
    for (int64_t i = 0; i < elements; ++i) {
      Bits bits;
      std::memcpy(&bits, row + i * sizeof(Bits), sizeof(Bits));
      if (bits & zeroMask)
        return false;
    }
    return true;
  };
  switch (dtype) {
  case DType::F32:
    return all(uint32_t{0x7fffffff});
  case DType::F64:
    return all(uint64_t{0x7fffffffffffffff});
  case DType::BF16:
  case DType::F16:
    return all(uint16_t{0x7fff});
  default:
    return std::all_of(row, row + elements * dtypeSize(dtype),
                       [](char byte) { return byte == 0; });
  }
}

} // namespace

void chunkOf(const void *in, void *out, DType dtype, const Shape &shape,
             int64_t dim, int64_t n, int64_t r, int64_t blocks) {
  // Blocks are a reshape of `dim` into [blocks, size / blocks], whose inner
  // dimension is chunked.
  Shape blocked = shape;
  blocked[dim] /= blocks;
  blocked.insert(blocked.begin() + dim, blocks);
  copyChunk(static_cast<const char *>(in), static_cast<char *>(out),
            Split3(blocked, dim + 1, dtype), n, r);
}

Tensor chunkOf(const Tensor &tensor, int64_t dim, int64_t n, int64_t r,
               int64_t blocks) {
  if (blocks < 0) {
    // Mirrored: odd-numbered blocks give rank r chunk n - 1 - r.
    std::vector<Tensor> parts;
    for (int64_t b = 0; b < -blocks; ++b)
      parts.push_back(chunkOf(chunkOf(tensor, dim, -blocks, b), dim, n,
                              b % 2 ? n - 1 - r : r));
    return concatenated(parts, dim);
  }
  std::vector<char> in = tensor.toBytes(), out(in.size() / n);
  chunkOf(in.data(), out.data(), tensor.dtype(), tensor.shape(), dim, n, r,
          blocks);
  Shape shape = tensor.shape();
  shape[dim] /= n;
  return Tensor::fromBytes(tensor.dtype(), shape, out.data());
}

Tensor concatenated(const std::vector<Tensor> &parts, int64_t dim) {
  const Tensor &part = parts.front();
  std::vector<char> blocks, out;
  for (const Tensor &p : parts) {
    std::vector<char> bytes = p.toBytes();
    blocks.insert(blocks.end(), bytes.begin(), bytes.end());
  }
  out.resize(blocks.size());
  int64_t n = static_cast<int64_t>(parts.size());
  concatBlocks(blocks.data(), out.data(),
               Split3(part.shape(), dim, part.dtype()), n);
  Shape shape = part.shape();
  shape[dim] *= n;
  return Tensor::fromBytes(part.dtype(), shape, out.data());
}

Tensor wholeFromChunks(const Tensor &gathered, int64_t dim, int64_t n,
                       int64_t blocks) {
  // `gathered` is [outer, n, blocks, chunk * inner]; the whole tensor is
  // [outer, blocks, n, chunk * inner] (mirrored blocks: odd ones in reverse
  // rank order).
  bool mirrored = blocks < 0;
  blocks = std::abs(blocks);
  Split3 s(gathered.shape(), dim, gathered.dtype());
  size_t piece = s.size / (n * blocks) * s.inner * s.width;
  std::vector<char> in = gathered.toBytes(), out(in.size());
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t b = 0; b < blocks; ++b)
        std::memcpy(out.data() + ((o * blocks + b) * n +
                                  (mirrored && b % 2 ? n - 1 - r : r)) *
                                     piece,
                    in.data() + ((o * n + r) * blocks + b) * piece, piece);
  return Tensor::fromBytes(gathered.dtype(), gathered.shape(), out.data());
}

// Raw buffers: what the engines move, rearranged where the split dimension
// is not the outermost.

void Communicator::allReduce(void *data, DType dtype, int64_t elements,
                             const std::vector<std::string> &axes,
                             ReduceKind kind) {
  int64_t n = groupSize(axes);
  allReduceBytes(data, elements, dtype, axes, kind);
  count(CollectiveKind::AllReduce,
        2.0 * (n - 1) / n * elements * dtypeSize(dtype));
}

std::unique_ptr<PendingCollective>
Communicator::allReduceStart(void *data, DType dtype, int64_t elements,
                             const std::vector<std::string> &axes,
                             ReduceKind kind) {
  int64_t n = groupSize(axes);
  count(CollectiveKind::AllReduce,
        2.0 * (n - 1) / n * elements * dtypeSize(dtype));
  return allReduceBytesStart(data, elements, dtype, axes, kind);
}

void Communicator::allGather(const void *in, void *out, DType dtype,
                             const Shape &shape,
                             const std::vector<std::string> &axes,
                             int64_t dim) {
  allGatherStart(in, out, dtype, shape, axes, dim)->wait();
}

void Communicator::reduceScatter(const void *in, void *out, DType dtype,
                                 const Shape &shape,
                                 const std::vector<std::string> &axes,
                                 int64_t dim) {
  reduceScatterStart(in, out, dtype, shape, axes, dim)->wait();
}

std::unique_ptr<PendingCollective> Communicator::allGatherStart(
    const void *in, void *out, DType dtype, const Shape &shape,
    const std::vector<std::string> &axes, int64_t dim) {
  checkDim(shape, dim, "all_gather");
  int64_t n = groupSize(axes);
  Split3 s(shape, dim, dtype);
  count(CollectiveKind::AllGather, double(n - 1) / n * s.bytes() * n);
  if (s.outer == 1)
    return allGatherBytesStart(in, out, s.bytes(), axes);
  // Along an inner dimension the blocks are rearranged after the transfer
  // through staging, which the next collective reuses: it blocks.
  staging[0].resize(s.bytes() * n);
  allGatherBytes(in, staging[0].data(), s.bytes(), axes);
  concatBlocks(staging[0].data(), static_cast<char *>(out), s, n);
  return std::make_unique<CompletedCollective>();
}

std::unique_ptr<PendingCollective> Communicator::reduceScatterStart(
    const void *in, void *out, DType dtype, const Shape &shape,
    const std::vector<std::string> &axes, int64_t dim) {
  int64_t n = groupSize(axes);
  checkChunks(shape, dtype, dim, n, "reduce_scatter");
  Split3 s(shape, dim, dtype);
  count(CollectiveKind::ReduceScatter, double(n - 1) / n * s.bytes());
  int64_t elements = s.bytes() / n / s.width;
  if (s.outer == 1)
    return reduceScatterBytesStart(in, out, elements, dtype, axes);
  // Chunk r of every rank is summed into rank r: along an inner dimension
  // the chunks are first put in order in staging, so it blocks.
  reduceScatterBytes(inChunkOrder(in, s, n, staging[0]), out, elements, dtype,
                     axes);
  return std::make_unique<CompletedCollective>();
}

std::unique_ptr<PendingCollective>
Communicator::allGatherBytesStart(const void *in, void *out, int64_t bytes,
                                  const std::vector<std::string> &axes) {
  allGatherBytes(in, out, bytes, axes);
  return std::make_unique<CompletedCollective>();
}

std::unique_ptr<PendingCollective>
Communicator::reduceScatterBytesStart(const void *in, void *out,
                                      int64_t elements, DType dtype,
                                      const std::vector<std::string> &axes) {
  reduceScatterBytes(in, out, elements, dtype, axes);
  return std::make_unique<CompletedCollective>();
}

void Communicator::allToAll(const void *in, void *out, DType dtype,
                            const Shape &shape,
                            const std::vector<std::string> &axes,
                            int64_t splitDim, int64_t concatDim,
                            int64_t rowsDim) {
  int64_t n = groupSize(axes);
  checkChunks(shape, dtype, splitDim, n, "all_to_all");
  checkDim(shape, concatDim, "all_to_all");
  Split3 split(shape, splitDim, dtype);
  const void *blocks = inChunkOrder(in, split, n, staging[0]);
  Shape chunk = shape;
  chunk[splitDim] /= n;
  Split3 concat(chunk, concatDim, dtype);
  void *arrived = out;
  if (concat.outer != 1) {
    staging[1].resize(split.bytes());
    arrived = staging[1].data();
  }
  if (rowsDim >= 0 && hasAllToAllV()) {
    checkDim(shape, rowsDim, "all_to_all");
    Split3 rows(chunk, rowsDim, dtype);
    exchangeFilledRows(blocks, arrived, rows.outer, rows.size, rows.inner,
                       dtype, axes);
  } else {
    allToAllBytes(blocks, arrived, split.bytes() / n, axes);
    count(CollectiveKind::AllToAll, double(n - 1) / n * split.bytes());
  }
  if (concat.outer != 1)
    concatBlocks(staging[1].data(), static_cast<char *>(out), concat, n);
}

void Communicator::exchangeFilledRows(const void *blocks, void *out,
                                      int64_t slices, int64_t rowsPerSlice,
                                      int64_t rowElements, DType dtype,
                                      const std::vector<std::string> &axes) {
  int64_t n = groupSize(axes), me = groupRank(axes);
  size_t rowBytes = rowElements * dtypeSize(dtype),
         sliceBytes = rowsPerSlice * rowBytes, block = slices * sliceBytes;
  // Each block's slices: the rows up to the last non-zero one.
  std::vector<int64_t> &sent = rowCounts[0], &arriving = rowCounts[1];
  sent.assign(n * slices, 0);
  arriving.assign(n * slices, 0);
  std::vector<int64_t> sendBytes(n, 0), receiveBytes(n, 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < slices; ++o) {
      const char *slice =
          static_cast<const char *>(blocks) + r * block + o * sliceBytes;
      int64_t filled = rowsPerSlice;
      while (filled > 0 &&
             isZeroRow(slice + (filled - 1) * rowBytes, rowElements, dtype))
        --filled;
      sent[r * slices + o] = filled;
      sendBytes[r] += filled * rowBytes;
    }
  // The counts first, then the rows they count, packed.
  allToAllBytes(sent.data(), arriving.data(), slices * sizeof(int64_t), axes);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < slices; ++o)
      receiveBytes[r] += arriving[r * slices + o] * rowBytes;
  std::vector<char> &packed = staging[2], &unpacked = staging[3];
  packed.clear();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < slices; ++o) {
      const char *slice =
          static_cast<const char *>(blocks) + r * block + o * sliceBytes;
      packed.insert(packed.end(), slice,
                    slice + sent[r * slices + o] * rowBytes);
    }
  int64_t total = 0;
  for (int64_t bytes : receiveBytes)
    total += bytes;
  unpacked.resize(total);
  allToAllVBytes(packed.data(), sendBytes, unpacked.data(), receiveBytes, axes);
  // Each arrived slice at its place, zeros after it.
  std::memset(out, 0, n * block);
  const char *next = unpacked.data();
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < slices; ++o) {
      size_t bytes = arriving[r * slices + o] * rowBytes;
      std::memcpy(static_cast<char *>(out) + r * block + o * sliceBytes, next,
                  bytes);
      next += bytes;
    }
  double busBytes = (n - 1) * slices * sizeof(int64_t);
  for (int64_t r = 0; r < n; ++r)
    if (r != me)
      busBytes += sendBytes[r];
  count(CollectiveKind::AllToAll, busBytes);
}

void Communicator::broadcast(void *data, int64_t bytes,
                             const std::vector<std::string> &axes,
                             int64_t root) {
  broadcastStart(data, bytes, axes, root)->wait();
}

std::unique_ptr<PendingCollective>
Communicator::broadcastStart(void *data, int64_t bytes,
                             const std::vector<std::string> &axes,
                             int64_t root) {
  if (root < 0 || root >= groupSize(axes))
    fatal("broadcast: no group rank " + std::to_string(root));
  count(CollectiveKind::Broadcast, bytes);
  return broadcastBytesStart(data, bytes, axes, root);
}

std::unique_ptr<PendingCollective>
Communicator::broadcastBytesStart(void *data, int64_t bytes,
                                  const std::vector<std::string> &axes,
                                  int64_t root) {
  broadcastBytes(data, bytes, axes, root);
  return std::make_unique<CompletedCollective>();
}

void Communicator::sendRecv(const void *in, void *out, int64_t bytes,
                            int64_t to, int64_t from) {
  for (int64_t peer : {to, from})
    if (peer < 0 || peer >= worldSize())
      fatal("send_recv: no rank " + std::to_string(peer));
  sendRecvBytes(in, out, bytes, to, from);
  count(CollectiveKind::SendRecv, bytes);
}

std::unique_ptr<PendingCollective>
Communicator::sendStart(const void *data, int64_t bytes, int64_t to) {
  if (to < 0 || to >= worldSize())
    fatal("send: no rank " + std::to_string(to));
  count(CollectiveKind::SendRecv, bytes);
  return sendBytesStart(data, bytes, to);
}

std::unique_ptr<PendingCollective>
Communicator::receiveStart(void *data, int64_t bytes, int64_t from) {
  if (from < 0 || from >= worldSize())
    fatal("receive: no rank " + std::to_string(from));
  return receiveBytesStart(data, bytes, from);
}

std::vector<std::unique_ptr<PendingCollective>>
Communicator::transferStart(void *data, int64_t bytes,
                            const std::vector<std::string> &axes, int64_t root,
                            const std::vector<int64_t> &receivers) {
  std::vector<int64_t> members = groupMembers(axes);
  int64_t me = groupRank(axes);
  std::vector<std::unique_ptr<PendingCollective>> handles;
  if (me == root)
    for (int64_t receiver : receivers)
      handles.push_back(sendStart(data, bytes, members[receiver]));
  else if (std::find(receivers.begin(), receivers.end(), me) != receivers.end())
    handles.push_back(receiveStart(data, bytes, members[root]));
  return handles;
}

void Communicator::allToAllVBytes(const void *, const std::vector<int64_t> &,
                                  void *, const std::vector<int64_t> &,
                                  const std::vector<std::string> &) {
  fatal("this engine has no all-to-all-v");
}

std::unique_ptr<PendingCollective>
Communicator::sendBytesStart(const void *, int64_t, int64_t) {
  fatal("this engine has no point-to-point transfers");
  return nullptr;
}

std::unique_ptr<PendingCollective>
Communicator::receiveBytesStart(void *, int64_t, int64_t) {
  fatal("this engine has no point-to-point transfers");
  return nullptr;
}

// Host tensors: their bytes through the raw forms.

void Communicator::allReduce(Tensor &tensor,
                             const std::vector<std::string> &axes,
                             ReduceKind kind) {
  std::vector<char> bytes = tensor.toBytes();
  allReduce(bytes.data(), tensor.dtype(), tensor.numElements(), axes, kind);
  tensor = Tensor::fromBytes(tensor.dtype(), tensor.shape(), bytes.data());
}

Tensor Communicator::allGather(const Tensor &tensor,
                               const std::vector<std::string> &axes,
                               int64_t dim) {
  checkDim(tensor.shape(), dim, "all_gather");
  Shape shape = tensor.shape();
  shape[dim] *= groupSize(axes);
  std::vector<char> in = tensor.toBytes(), out(in.size() * groupSize(axes));
  allGather(in.data(), out.data(), tensor.dtype(), tensor.shape(), axes, dim);
  return Tensor::fromBytes(tensor.dtype(), shape, out.data());
}

Tensor Communicator::reduceScatter(const Tensor &tensor,
                                   const std::vector<std::string> &axes,
                                   int64_t dim) {
  int64_t n = groupSize(axes);
  checkChunks(tensor.shape(), tensor.dtype(), dim, n, "reduce_scatter");
  Shape shape = tensor.shape();
  shape[dim] /= n;
  std::vector<char> in = tensor.toBytes(), out(in.size() / n);
  reduceScatter(in.data(), out.data(), tensor.dtype(), tensor.shape(), axes,
                dim);
  return Tensor::fromBytes(tensor.dtype(), shape, out.data());
}

Tensor Communicator::allToAll(const Tensor &tensor,
                              const std::vector<std::string> &axes,
                              int64_t splitDim, int64_t concatDim,
                              int64_t rowsDim) {
  int64_t n = groupSize(axes);
  checkChunks(tensor.shape(), tensor.dtype(), splitDim, n, "all_to_all");
  checkDim(tensor.shape(), concatDim, "all_to_all");
  Shape shape = tensor.shape();
  shape[splitDim] /= n;
  shape[concatDim] *= n;
  std::vector<char> in = tensor.toBytes(), out(in.size());
  allToAll(in.data(), out.data(), tensor.dtype(), tensor.shape(), axes,
           splitDim, concatDim, rowsDim);
  return Tensor::fromBytes(tensor.dtype(), shape, out.data());
}

void Communicator::broadcast(Tensor &tensor,
                             const std::vector<std::string> &axes,
                             int64_t root) {
  std::vector<char> bytes = tensor.toBytes();
  broadcast(bytes.data(), bytes.size(), axes, root);
  tensor = Tensor::fromBytes(tensor.dtype(), tensor.shape(), bytes.data());
}

Tensor Communicator::sendRecv(const Tensor &tensor, int64_t to, int64_t from) {
  std::vector<char> in = tensor.toBytes(), out(in.size());
  sendRecv(in.data(), out.data(), in.size(), to, from);
  return Tensor::fromBytes(tensor.dtype(), tensor.shape(), out.data());
}

void Communicator::pollWithBackOff(const std::function<bool()> &done,
                                   const std::function<bool(double)> &idle) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  std::chrono::microseconds nap(20);
  for (int polls = 0;; ++polls) {
    if (done())
      return;
    if (polls < 200)
      continue;
    if (idle(std::chrono::duration<double>(Clock::now() - start).count()))
      return;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(500));
  }
}

} // namespace mlir::dtc

//===- Communicator.cpp - collectives over a device mesh ------------------===//
//
// What every engine shares: the mesh's rank layout, the arrangement of
// tensors into the contiguous blocks collectives move, and the traffic
// count. Engines only move bytes.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/Communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

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
         " ranks were launched (mpirun -np " + std::to_string(numDevices()) +
         ")";
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

void Communicator::count(CollectiveKind kind, double busBytes) {
  CollectiveCount &entry = traffic[kind];
  ++entry.calls;
  entry.busBytes += busBytes;
}

namespace {

/// A tensor viewed as [outer, size, inner] around dimension `dim`.
struct Split3 {
  int64_t outer = 1, size, inner = 1;
  Split3(const Shape &shape, int64_t dim) : size(shape[dim]) {
    for (int64_t i = 0; i < dim; ++i)
      outer *= shape[i];
    for (size_t i = dim + 1; i < shape.size(); ++i)
      inner *= shape[i];
  }
};

/// Chunk `r` of `n` equal chunks of `tensor` along `dim`, as bytes.
std::vector<char> chunkBytes(const Tensor &tensor, int64_t dim, int64_t n,
                             int64_t r) {
  Split3 s(tensor.shape(), dim);
  int64_t part = s.size / n;
  size_t width = dtypeSize(tensor.dtype());
  std::vector<char> all = tensor.toBytes(), out;
  out.reserve(s.outer * part * s.inner * width);
  for (int64_t o = 0; o < s.outer; ++o) {
    const char *from = all.data() + ((o * s.size + r * part) * s.inner) * width;
    out.insert(out.end(), from, from + part * s.inner * width);
  }
  return out;
}

/// Concatenates `n` blocks (each a tensor of `shape`) along `dim`.
Tensor concatBlocks(const std::vector<char> &blocks, DType dtype,
                    const Shape &shape, int64_t dim, int64_t n) {
  Split3 s(shape, dim);
  size_t width = dtypeSize(dtype);
  size_t blockBytes = s.outer * s.size * s.inner * width;
  Shape outShape = shape;
  outShape[dim] *= n;
  std::vector<char> out(blockBytes * n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t o = 0; o < s.outer; ++o)
      std::memcpy(out.data() + ((o * n + r) * s.size * s.inner) * width,
                  blocks.data() + r * blockBytes +
                      (o * s.size * s.inner) * width,
                  s.size * s.inner * width);
  return Tensor::fromBytes(dtype, outShape, out.data());
}

int64_t checkedChunks(const Tensor &tensor, int64_t dim, int64_t n,
                      const char *what) {
  if (dim < 0 || dim >= tensor.rank() || tensor.shape()[dim] % n != 0)
    fatal(std::string(what) + ": dimension " + std::to_string(dim) + " of " +
          describe(tensor.shape(), tensor.dtype()) + " does not split into " +
          std::to_string(n) + " chunks");
  return tensor.shape()[dim] / n;
}

class PendingAllReduce : public PendingCollective {
public:
  PendingAllReduce(std::unique_ptr<PendingCollective> engine,
                   std::unique_ptr<std::vector<char>> bytes, Tensor &tensor)
      : engine(std::move(engine)), bytes(std::move(bytes)), tensor(tensor) {}
  void wait() override {
    engine->wait();
    tensor = Tensor::fromBytes(tensor.dtype(), tensor.shape(), bytes->data());
  }

private:
  std::unique_ptr<PendingCollective> engine;
  std::unique_ptr<std::vector<char>> bytes;
  Tensor &tensor;
};

} // namespace

Tensor chunkOf(const Tensor &tensor, int64_t dim, int64_t n, int64_t r,
               int64_t blocks) {
  // Blocks are a reshape of `dim` into [blocks, size / blocks], whose inner
  // dimension is chunked.
  Shape blocked = tensor.shape();
  blocked[dim] /= blocks;
  blocked.insert(blocked.begin() + dim, blocks);
  Tensor view =
      Tensor::fromBytes(tensor.dtype(), blocked, tensor.toBytes().data());
  Shape shape = tensor.shape();
  shape[dim] /= n;
  return Tensor::fromBytes(tensor.dtype(), shape,
                           chunkBytes(view, dim + 1, n, r).data());
}

Tensor wholeFromChunks(const Tensor &gathered, int64_t dim, int64_t n,
                       int64_t blocks) {
  // `gathered` is [outer, n, blocks, chunk * inner]; the whole tensor is
  // [outer, blocks, n, chunk * inner].
  Split3 s(gathered.shape(), dim);
  size_t width = dtypeSize(gathered.dtype());
  size_t piece = s.size / (n * blocks) * s.inner * width;
  std::vector<char> in = gathered.toBytes(), out(in.size());
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t b = 0; b < blocks; ++b)
        std::memcpy(out.data() + ((o * blocks + b) * n + r) * piece,
                    in.data() + ((o * n + r) * blocks + b) * piece, piece);
  return Tensor::fromBytes(gathered.dtype(), gathered.shape(), out.data());
}

void Communicator::allReduce(Tensor &tensor,
                             const std::vector<std::string> &axes,
                             ReduceKind kind) {
  int64_t n = groupSize(axes);
  std::vector<char> bytes = tensor.toBytes();
  allReduceBytes(bytes, tensor.dtype(), axes, kind);
  tensor = Tensor::fromBytes(tensor.dtype(), tensor.shape(), bytes.data());
  count(CollectiveKind::AllReduce, 2.0 * (n - 1) / n * bytes.size());
}

std::unique_ptr<PendingCollective> Communicator::allReduceStart(
    Tensor &tensor, const std::vector<std::string> &axes, ReduceKind kind) {
  int64_t n = groupSize(axes);
  auto bytes = std::make_unique<std::vector<char>>(tensor.toBytes());
  count(CollectiveKind::AllReduce, 2.0 * (n - 1) / n * bytes->size());
  std::unique_ptr<PendingCollective> engine =
      allReduceBytesStart(*bytes, tensor.dtype(), axes, kind);
  return std::make_unique<PendingAllReduce>(std::move(engine), std::move(bytes),
                                            tensor);
}

Tensor Communicator::allGather(const Tensor &tensor,
                               const std::vector<std::string> &axes,
                               int64_t dim) {
  int64_t n = groupSize(axes);
  if (dim < 0 || dim >= tensor.rank())
    fatal("all_gather: no dimension " + std::to_string(dim));
  std::vector<char> blocks = allGatherBytes(tensor.toBytes(), axes);
  count(CollectiveKind::AllGather, double(n - 1) / n * blocks.size());
  return concatBlocks(blocks, tensor.dtype(), tensor.shape(), dim, n);
}

Tensor Communicator::reduceScatter(const Tensor &tensor,
                                   const std::vector<std::string> &axes,
                                   int64_t dim) {
  int64_t n = groupSize(axes);
  int64_t part = checkedChunks(tensor, dim, n, "reduce_scatter");
  // Chunk r of every rank is summed into rank r.
  std::vector<char> blocks;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<char> chunk = chunkBytes(tensor, dim, n, r);
    blocks.insert(blocks.end(), chunk.begin(), chunk.end());
  }
  std::vector<char> mine = reduceScatterBytes(blocks, tensor.dtype(), axes);
  count(CollectiveKind::ReduceScatter, double(n - 1) / n * blocks.size());
  Shape shape = tensor.shape();
  shape[dim] = part;
  return Tensor::fromBytes(tensor.dtype(), shape, mine.data());
}

Tensor Communicator::allToAll(const Tensor &tensor,
                              const std::vector<std::string> &axes,
                              int64_t splitDim, int64_t concatDim) {
  int64_t n = groupSize(axes);
  int64_t part = checkedChunks(tensor, splitDim, n, "all_to_all");
  if (concatDim < 0 || concatDim >= tensor.rank())
    fatal("all_to_all: no dimension " + std::to_string(concatDim));
  std::vector<char> blocks;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<char> chunk = chunkBytes(tensor, splitDim, n, r);
    blocks.insert(blocks.end(), chunk.begin(), chunk.end());
  }
  std::vector<char> received = allToAllBytes(blocks, axes);
  count(CollectiveKind::AllToAll, double(n - 1) / n * blocks.size());
  Shape chunkShape = tensor.shape();
  chunkShape[splitDim] = part;
  return concatBlocks(received, tensor.dtype(), chunkShape, concatDim, n);
}

void Communicator::broadcast(Tensor &tensor,
                             const std::vector<std::string> &axes,
                             int64_t root) {
  if (root < 0 || root >= groupSize(axes))
    fatal("broadcast: no group rank " + std::to_string(root));
  std::vector<char> bytes = tensor.toBytes();
  broadcastBytes(bytes, axes, root);
  tensor = Tensor::fromBytes(tensor.dtype(), tensor.shape(), bytes.data());
  count(CollectiveKind::Broadcast, bytes.size());
}

Tensor Communicator::sendRecv(const Tensor &tensor, int64_t to, int64_t from) {
  for (int64_t peer : {to, from})
    if (peer < 0 || peer >= worldSize())
      fatal("send_recv: no rank " + std::to_string(peer));
  std::vector<char> received = sendRecvBytes(tensor.toBytes(), to, from);
  count(CollectiveKind::SendRecv, received.size());
  return Tensor::fromBytes(tensor.dtype(), tensor.shape(), received.data());
}

} // namespace mlir::dtc

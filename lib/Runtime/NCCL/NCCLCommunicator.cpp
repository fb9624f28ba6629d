//===- NCCLCommunicator.cpp - the NCCL engine of the Communicator ---------===//
//
// GPU collectives through NCCL, one NCCL communicator per group of axes,
// bootstrapped over MPI (the group's first rank makes the unique id and
// broadcasts it on the matching MPI communicator). Tensors are staged
// through device buffers on one stream; the asynchronous form returns once
// the collective is enqueued.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/NCCL/NCCLCommunicator.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace mlir::dtc {
namespace {

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "dtc runtime error: %s: %s\n", what,
                 cudaGetErrorString(status));
    std::abort();
  }
}

void check(ncclResult_t status, const char *what) {
  if (status != ncclSuccess) {
    std::fprintf(stderr, "dtc runtime error: %s: %s\n", what,
                 ncclGetErrorString(status));
    std::abort();
  }
}

ncclDataType_t ncclType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::BF16:
    return ncclBfloat16;
  case DType::F16:
    return ncclFloat16;
  case DType::I64:
    return ncclInt64;
  case DType::I32:
    return ncclInt32;
  case DType::I8:
    return ncclInt8;
  case DType::U8:
  case DType::Bool:
    return ncclUint8;
  case DType::I16:
    // NCCL has no 16-bit integer: reducing one as bytes would be wrong.
    std::fprintf(stderr, "dtc runtime error: NCCL cannot reduce i16 "
                         "tensors (no 16-bit integer type)\n");
    std::abort();
  }
  return ncclUint8;
}

ncclRedOp_t ncclOp(ReduceKind kind) {
  return kind == ReduceKind::Sum   ? ncclSum
         : kind == ReduceKind::Max ? ncclMax
                                   : ncclMin;
}

/// A device copy of host bytes, freed with it.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes) : size(bytes) {
    check(cudaMalloc(&data, std::max<size_t>(bytes, 1)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(data); }
  void upload(const std::vector<char> &host, cudaStream_t stream) {
    check(cudaMemcpyAsync(data, host.data(), size, cudaMemcpyHostToDevice,
                          stream),
          "cudaMemcpyAsync");
  }
  void download(std::vector<char> &host, cudaStream_t stream) {
    host.resize(size);
    check(cudaMemcpyAsync(host.data(), data, size, cudaMemcpyDeviceToHost,
                          stream),
          "cudaMemcpyAsync");
  }
  void *data = nullptr;
  size_t size;
};

class NCCLPending : public PendingCollective {
public:
  NCCLPending(std::unique_ptr<DeviceBuffer> buffer, std::vector<char> &host,
              cudaStream_t stream)
      : buffer(std::move(buffer)), host(host), stream(stream) {}
  void wait() override {
    buffer->download(host, stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }

private:
  std::unique_ptr<DeviceBuffer> buffer;
  std::vector<char> &host;
  cudaStream_t stream;
};

class NCCLCommunicator : public Communicator {
public:
  explicit NCCLCommunicator(const MeshShape &mesh) : Communicator(mesh) {
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
    MPI_Comm_size(MPI_COMM_WORLD, &worldCount);
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check(cudaSetDevice(worldRank % devices), "cudaSetDevice");
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
  }
  ~NCCLCommunicator() override {
    for (auto &entry : groups)
      ncclCommDestroy(entry.second);
    cudaStreamDestroy(stream);
  }

  int64_t rank() const override { return worldRank; }
  int64_t worldSize() const override { return worldCount; }

protected:
  void allReduceBytes(std::vector<char> &bytes, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    allReduceBytesStart(bytes, dtype, axes, kind)->wait();
  }

  std::unique_ptr<PendingCollective>
  allReduceBytesStart(std::vector<char> &bytes, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    auto buffer = std::make_unique<DeviceBuffer>(bytes.size());
    buffer->upload(bytes, stream);
    check(ncclAllReduce(buffer->data, buffer->data,
                        bytes.size() / dtypeSize(dtype), ncclType(dtype),
                        ncclOp(kind), group(axes), stream),
          "ncclAllReduce");
    return std::make_unique<NCCLPending>(std::move(buffer), bytes, stream);
  }

  std::vector<char>
  allGatherBytes(const std::vector<char> &bytes,
                 const std::vector<std::string> &axes) override {
    DeviceBuffer in(bytes.size()), out(bytes.size() * groupSize(axes));
    in.upload(bytes, stream);
    check(ncclAllGather(in.data, out.data, bytes.size(), ncclUint8, group(axes),
                        stream),
          "ncclAllGather");
    return finish(out);
  }

  std::vector<char>
  reduceScatterBytes(const std::vector<char> &bytes, DType dtype,
                     const std::vector<std::string> &axes) override {
    DeviceBuffer in(bytes.size()), out(bytes.size() / groupSize(axes));
    in.upload(bytes, stream);
    check(ncclReduceScatter(in.data, out.data, out.size / dtypeSize(dtype),
                            ncclType(dtype), ncclSum, group(axes), stream),
          "ncclReduceScatter");
    return finish(out);
  }

  std::vector<char>
  allToAllBytes(const std::vector<char> &bytes,
                const std::vector<std::string> &axes) override {
    int64_t n = groupSize(axes);
    size_t block = bytes.size() / n;
    DeviceBuffer in(bytes.size()), out(bytes.size());
    in.upload(bytes, stream);
    ncclComm_t comm = group(axes);
    check(ncclGroupStart(), "ncclGroupStart");
    for (int64_t r = 0; r < n; ++r) {
      check(ncclSend(static_cast<char *>(in.data) + r * block, block, ncclUint8,
                     r, comm, stream),
            "ncclSend");
      check(ncclRecv(static_cast<char *>(out.data) + r * block, block,
                     ncclUint8, r, comm, stream),
            "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    return finish(out);
  }

  void broadcastBytes(std::vector<char> &bytes,
                      const std::vector<std::string> &axes,
                      int64_t root) override {
    DeviceBuffer buffer(bytes.size());
    buffer.upload(bytes, stream);
    check(ncclBroadcast(buffer.data, buffer.data, bytes.size(), ncclUint8, root,
                        group(axes), stream),
          "ncclBroadcast");
    bytes = finish(buffer);
  }

  std::vector<char> sendRecvBytes(const std::vector<char> &bytes, int64_t to,
                                  int64_t from) override {
    DeviceBuffer in(bytes.size()), out(bytes.size());
    in.upload(bytes, stream);
    std::vector<std::string> all(mesh().axes);
    ncclComm_t world = group(all);
    check(ncclGroupStart(), "ncclGroupStart");
    check(ncclSend(in.data, bytes.size(), ncclUint8, to, world, stream),
          "ncclSend");
    check(ncclRecv(out.data, bytes.size(), ncclUint8, from, world, stream),
          "ncclRecv");
    check(ncclGroupEnd(), "ncclGroupEnd");
    return finish(out);
  }

private:
  std::vector<char> finish(DeviceBuffer &buffer) {
    std::vector<char> host;
    buffer.download(host, stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return host;
  }

  /// The NCCL communicator of the ranks that differ from this one only
  /// along `axes`, bootstrapped over the matching MPI communicator.
  ncclComm_t group(const std::vector<std::string> &axes) {
    std::string key = groupKey(axes);
    auto it = groups.find(key);
    if (it != groups.end())
      return it->second;
    MPI_Comm mpiGroup;
    int groupIndex = groupRank(axes);
    MPI_Comm_split(MPI_COMM_WORLD, groupId(axes), groupIndex, &mpiGroup);
    ncclUniqueId id;
    if (groupIndex == 0)
      check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mpiGroup);
    MPI_Comm_free(&mpiGroup);
    ncclComm_t comm;
    check(ncclCommInitRank(&comm, groupSize(axes), id, groupIndex),
          "ncclCommInitRank");
    groups[key] = comm;
    return comm;
  }

  int worldRank = 0, worldCount = 1;
  cudaStream_t stream = nullptr;
  std::map<std::string, ncclComm_t> groups;
};

} // namespace

std::unique_ptr<Communicator> createNCCLCommunicator(const MeshShape &mesh,
                                                     std::string &error) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    error = "no CUDA device is visible";
    return nullptr;
  }
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  error = mesh.checkLaunchedRanks(size);
  if (!error.empty())
    return nullptr;
  return std::make_unique<NCCLCommunicator>(mesh);
}

} // namespace mlir::dtc

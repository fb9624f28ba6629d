//===- NCCLCommunicator.cpp - the NCCL engine of the Communicator ---------===//
//
// GPU collectives through NCCL, one NCCL communicator per group of axes,
// bootstrapped over MPI (the group's first rank makes the unique id and
// broadcasts it on the matching MPI communicator). Tensors are staged
// through device buffers on one stream; the asynchronous form returns once
// the collective is enqueued. Waiting polls the stream with back-off,
// watching NCCL's asynchronous errors; an error, or a wait past the
// collective timeout, aborts the NCCL communicators (ncclCommAbort) and
// ends the job naming the collective.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/NCCL/NCCLCommunicator.h"
#include "dtc/Runtime/NCCL/NCCLDataType.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

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
  if (std::optional<ncclDataType_t> type = ncclTypeOf(dtype))
    return *type;
  // NCCL has no 16-bit integer: reducing one as bytes would be wrong.
  std::fprintf(stderr, "dtc runtime error: NCCL cannot reduce i16 tensors "
                       "(no 16-bit integer type)\n");
  std::abort();
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
  void upload(const void *host, cudaStream_t stream) {
    check(cudaMemcpyAsync(data, host, size, cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync");
  }
  void download(void *host, cudaStream_t stream) {
    check(cudaMemcpyAsync(host, data, size, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync");
  }
  void *data = nullptr;
  size_t size;
};

class NCCLCommunicator;

class NCCLPending : public PendingCollective {
public:
  NCCLPending(NCCLCommunicator &comm, std::unique_ptr<DeviceBuffer> buffer,
              void *host, cudaStream_t stream, std::string_view reason)
      : comm(comm), buffer(std::move(buffer)), host(host), stream(stream),
        reason(reason) {
    this->buffer->download(host, stream);
  }
  bool test() override { return cudaStreamQuery(stream) == cudaSuccess; }
  void wait() override;

private:
  NCCLCommunicator &comm;
  std::unique_ptr<DeviceBuffer> buffer;
  void *host;
  cudaStream_t stream;
  std::string_view reason;
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
  void allReduceBytes(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    allReduceBytesStart(data, elements, dtype, axes, kind)->wait();
  }

  std::unique_ptr<PendingCollective>
  allReduceBytesStart(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    auto buffer = std::make_unique<DeviceBuffer>(elements * dtypeSize(dtype));
    buffer->upload(data, stream);
    check(ncclAllReduce(buffer->data, buffer->data, elements, ncclType(dtype),
                        ncclOp(kind), group(axes), stream),
          "ncclAllReduce");
    return std::make_unique<NCCLPending>(*this, std::move(buffer), data, stream,
                                         reason);
  }

  void allGatherBytes(const void *in, void *out, int64_t bytes,
                      const std::vector<std::string> &axes) override {
    DeviceBuffer from(bytes), to(bytes * groupSize(axes));
    from.upload(in, stream);
    check(ncclAllGather(from.data, to.data, bytes, ncclUint8, group(axes),
                        stream),
          "ncclAllGather");
    finish(to, out, "all_gather");
  }

  void reduceScatterBytes(const void *in, void *out, int64_t elements,
                          DType dtype,
                          const std::vector<std::string> &axes) override {
    size_t block = elements * dtypeSize(dtype);
    DeviceBuffer from(block * groupSize(axes)), to(block);
    from.upload(in, stream);
    check(ncclReduceScatter(from.data, to.data, elements, ncclType(dtype),
                            ncclSum, group(axes), stream),
          "ncclReduceScatter");
    finish(to, out, "reduce_scatter");
  }

  void allToAllBytes(const void *in, void *out, int64_t block,
                     const std::vector<std::string> &axes) override {
    int64_t n = groupSize(axes);
    DeviceBuffer from(block * n), to(block * n);
    from.upload(in, stream);
    ncclComm_t comm = group(axes);
    check(ncclGroupStart(), "ncclGroupStart");
    for (int64_t r = 0; r < n; ++r) {
      check(ncclSend(static_cast<char *>(from.data) + r * block, block,
                     ncclUint8, r, comm, stream),
            "ncclSend");
      check(ncclRecv(static_cast<char *>(to.data) + r * block, block, ncclUint8,
                     r, comm, stream),
            "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    finish(to, out, "all_to_all");
  }

  bool hasAllToAllV() const override { return true; }

  void allToAllVBytes(const void *in, const std::vector<int64_t> &sendBytes,
                      void *out, const std::vector<int64_t> &receiveBytes,
                      const std::vector<std::string> &axes) override {
    int64_t n = groupSize(axes), sent = 0, received = 0;
    for (int64_t r = 0; r < n; ++r) {
      sent += sendBytes[r];
      received += receiveBytes[r];
    }
    DeviceBuffer from(sent), to(received);
    from.upload(in, stream);
    ncclComm_t comm = group(axes);
    check(ncclGroupStart(), "ncclGroupStart");
    for (int64_t r = 0, sendAt = 0, receiveAt = 0; r < n; ++r) {
      if (sendBytes[r])
        check(ncclSend(static_cast<char *>(from.data) + sendAt, sendBytes[r],
                       ncclUint8, r, comm, stream),
              "ncclSend");
      if (receiveBytes[r])
        check(ncclRecv(static_cast<char *>(to.data) + receiveAt,
                       receiveBytes[r], ncclUint8, r, comm, stream),
              "ncclRecv");
      sendAt += sendBytes[r];
      receiveAt += receiveBytes[r];
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    finish(to, out, "all_to_all");
  }

  void broadcastBytes(void *data, int64_t bytes,
                      const std::vector<std::string> &axes,
                      int64_t root) override {
    DeviceBuffer buffer(bytes);
    buffer.upload(data, stream);
    check(ncclBroadcast(buffer.data, buffer.data, bytes, ncclUint8, root,
                        group(axes), stream),
          "ncclBroadcast");
    finish(buffer, data, "broadcast");
  }

  void sendRecvBytes(const void *in, void *out, int64_t bytes, int64_t to,
                     int64_t from) override {
    DeviceBuffer sent(bytes), received(bytes);
    sent.upload(in, stream);
    std::vector<std::string> all(mesh().axes);
    ncclComm_t world = group(all);
    check(ncclGroupStart(), "ncclGroupStart");
    check(ncclSend(sent.data, bytes, ncclUint8, to, world, stream), "ncclSend");
    check(ncclRecv(received.data, bytes, ncclUint8, from, world, stream),
          "ncclRecv");
    check(ncclGroupEnd(), "ncclGroupEnd");
    finish(received, out, "send_recv");
  }

public:
  /// Waits for the stream's work, polling with back-off (no busy loop)
  /// and watching NCCL's asynchronous errors; on one, or past the
  /// collective timeout, aborts the NCCL communicators and ends the job.
  void awaitStream(const char *kind, std::string_view why) {
    pollWithBackOff(
        [&] {
          cudaError_t status = cudaStreamQuery(stream);
          if (status != cudaSuccess && status != cudaErrorNotReady)
            check(status, "cudaStreamQuery");
          for (auto &entry : groups) {
            ncclResult_t async = ncclSuccess;
            if (ncclCommGetAsyncError(entry.second, &async) == ncclSuccess &&
                async != ncclSuccess)
              endJob(kind, why,
                     std::string("NCCL reports: ") + ncclGetErrorString(async));
          }
          return status == cudaSuccess;
        },
        [&](double waited) {
          if (timeoutSeconds > 0 && waited > timeoutSeconds)
            endJob(kind, why,
                   "waited more than --collective-timeout " +
                       std::to_string(timeoutSeconds) + " s");
          return false;
        });
  }

private:
  void finish(DeviceBuffer &buffer, void *host, const char *kind) {
    buffer.download(host, stream);
    awaitStream(kind, reason);
  }

  [[noreturn]] void endJob(const char *kind, std::string_view why,
                           const std::string &problem) {
    std::fprintf(
        stderr, "error: rank %d: NCCL %s%s%s%s%s: %s; ending the job\n",
        worldRank, kind, activity.empty() ? "" : " in ", activity.c_str(),
        why.empty() ? "" : " for ", std::string(why).c_str(), problem.c_str());
    std::fflush(stderr);
    for (auto &entry : groups)
      ncclCommAbort(entry.second);
    groups.clear();
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
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

void NCCLPending::wait() { comm.awaitStream("all_reduce", reason); }

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

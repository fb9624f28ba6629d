//===- MPICommunicator.cpp - the MPI engine of the Communicator -----------===//
//
// One MPI communicator per group of axes (MPI_Comm_split of the world by the
// coordinates on the other axes), created on first use. bf16 and f16 travel
// as 16-bit words and reduce through custom MPI ops that compute in f32 and
// round back.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/MPI/MPICommunicator.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

namespace mlir::dtc {
namespace {

template <DType Half, ReduceKind Kind>
void reduceHalves(void *in, void *inout, int *len, MPI_Datatype *) {
  auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i) {
    float x = floatFromHalfBits(a[i], Half), y = floatFromHalfBits(b[i], Half);
    float r = Kind == ReduceKind::Sum   ? x + y
              : Kind == ReduceKind::Max ? std::max(x, y)
                                        : std::min(x, y);
    b[i] = halfBitsFromFloat(r, Half);
  }
}

MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::BF16:
  case DType::F16:
    return MPI_UINT16_T;
  case DType::I64:
    return MPI_INT64_T;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I16:
    return MPI_INT16_T;
  case DType::I8:
    return MPI_INT8_T;
  case DType::U8:
  case DType::Bool:
    return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

class MPIPending : public PendingCollective {
public:
  explicit MPIPending(MPI_Request request) : request(request) {}
  void wait() override { MPI_Wait(&request, MPI_STATUS_IGNORE); }

private:
  MPI_Request request;
};

class MPICommunicator : public Communicator {
public:
  explicit MPICommunicator(const MeshShape &mesh) : Communicator(mesh) {
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
    MPI_Comm_size(MPI_COMM_WORLD, &worldCount);
    MPI_Op_create(reduceHalves<DType::BF16, ReduceKind::Sum>, 1,
                  &halfOps[0][0]);
    MPI_Op_create(reduceHalves<DType::BF16, ReduceKind::Max>, 1,
                  &halfOps[0][1]);
    MPI_Op_create(reduceHalves<DType::BF16, ReduceKind::Min>, 1,
                  &halfOps[0][2]);
    MPI_Op_create(reduceHalves<DType::F16, ReduceKind::Sum>, 1, &halfOps[1][0]);
    MPI_Op_create(reduceHalves<DType::F16, ReduceKind::Max>, 1, &halfOps[1][1]);
    MPI_Op_create(reduceHalves<DType::F16, ReduceKind::Min>, 1, &halfOps[1][2]);
  }
  ~MPICommunicator() override {
    for (auto &entry : groups)
      MPI_Comm_free(&entry.second);
    for (auto &row : halfOps)
      for (MPI_Op &op : row)
        MPI_Op_free(&op);
  }

  int64_t rank() const override { return worldRank; }
  int64_t worldSize() const override { return worldCount; }

protected:
  void allReduceBytes(std::vector<char> &bytes, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    MPI_Allreduce(MPI_IN_PLACE, bytes.data(), elements(bytes, dtype),
                  mpiType(dtype), op(dtype, kind), group(axes));
  }

  std::unique_ptr<PendingCollective>
  allReduceBytesStart(std::vector<char> &bytes, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, bytes.data(), elements(bytes, dtype),
                   mpiType(dtype), op(dtype, kind), group(axes), &request);
    return std::make_unique<MPIPending>(request);
  }

  std::vector<char>
  allGatherBytes(const std::vector<char> &bytes,
                 const std::vector<std::string> &axes) override {
    std::vector<char> out(bytes.size() * groupSize(axes));
    MPI_Allgather(bytes.data(), bytes.size(), MPI_BYTE, out.data(),
                  bytes.size(), MPI_BYTE, group(axes));
    return out;
  }

  std::vector<char>
  reduceScatterBytes(const std::vector<char> &bytes, DType dtype,
                     const std::vector<std::string> &axes) override {
    int64_t n = groupSize(axes);
    std::vector<char> out(bytes.size() / n);
    MPI_Reduce_scatter_block(bytes.data(), out.data(), elements(out, dtype),
                             mpiType(dtype), op(dtype, ReduceKind::Sum),
                             group(axes));
    return out;
  }

  std::vector<char>
  allToAllBytes(const std::vector<char> &bytes,
                const std::vector<std::string> &axes) override {
    int64_t block = bytes.size() / groupSize(axes);
    std::vector<char> out(bytes.size());
    MPI_Alltoall(bytes.data(), block, MPI_BYTE, out.data(), block, MPI_BYTE,
                 group(axes));
    return out;
  }

  void broadcastBytes(std::vector<char> &bytes,
                      const std::vector<std::string> &axes,
                      int64_t root) override {
    MPI_Bcast(bytes.data(), bytes.size(), MPI_BYTE, root, group(axes));
  }

  std::vector<char> sendRecvBytes(const std::vector<char> &bytes, int64_t to,
                                  int64_t from) override {
    std::vector<char> out(bytes.size());
    MPI_Sendrecv(bytes.data(), bytes.size(), MPI_BYTE, to, 0, out.data(),
                 out.size(), MPI_BYTE, from, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    return out;
  }

private:
  static int elements(const std::vector<char> &bytes, DType dtype) {
    return static_cast<int>(bytes.size() / dtypeSize(dtype));
  }

  MPI_Op op(DType dtype, ReduceKind kind) {
    int k = static_cast<int>(kind);
    if (dtype == DType::BF16 || dtype == DType::F16)
      return halfOps[dtype == DType::BF16 ? 0 : 1][k];
    return kind == ReduceKind::Sum   ? MPI_SUM
           : kind == ReduceKind::Max ? MPI_MAX
                                     : MPI_MIN;
  }

  /// The communicator of the ranks that differ from this one only along
  /// `axes`, ordered by their coordinates on `axes`.
  MPI_Comm group(const std::vector<std::string> &axes) {
    std::string key = groupKey(axes);
    auto it = groups.find(key);
    if (it != groups.end())
      return it->second;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, groupId(axes), groupRank(axes), &comm);
    groups[key] = comm;
    return comm;
  }

  int worldRank = 0, worldCount = 1;
  MPI_Op halfOps[2][3];
  std::map<std::string, MPI_Comm> groups;
};

} // namespace

std::unique_ptr<Communicator> createMPICommunicator(const MeshShape &mesh,
                                                    std::string &error) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  error = mesh.checkLaunchedRanks(size);
  if (!error.empty())
    return nullptr;
  return std::make_unique<MPICommunicator>(mesh);
}

int runOnMPIRanks(int &argc, char **&argv, const MeshShape &mesh,
                  const std::function<int(Communicator *)> &body) {
  MPI_Init(&argc, &argv);
  std::string error;
  std::unique_ptr<Communicator> comm = createMPICommunicator(mesh, error);
  if (!comm) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr, "error: %s\n", error.c_str());
    MPI_Finalize();
    return 1;
  }
  int status = body(comm.get());
  if (status != 0 && comm->worldSize() > 1)
    MPI_Abort(MPI_COMM_WORLD, status);
  comm.reset();
  MPI_Finalize();
  return status;
}

} // namespace mlir::dtc

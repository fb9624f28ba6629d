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
#include <limits>

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
  bool test() override {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    return done;
  }
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
  void allReduceBytes(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    MPI_Allreduce(MPI_IN_PLACE, data, checkedCount(elements), mpiType(dtype),
                  op(dtype, kind), group(axes));
  }

  std::unique_ptr<PendingCollective>
  allReduceBytesStart(void *data, int64_t elements, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, data, checkedCount(elements), mpiType(dtype),
                   op(dtype, kind), group(axes), &request);
    return std::make_unique<MPIPending>(request);
  }

  void allGatherBytes(const void *in, void *out, int64_t bytes,
                      const std::vector<std::string> &axes) override {
    int count = checkedCount(bytes);
    MPI_Allgather(in, count, MPI_BYTE, out, count, MPI_BYTE, group(axes));
  }

  void reduceScatterBytes(const void *in, void *out, int64_t elements,
                          DType dtype,
                          const std::vector<std::string> &axes) override {
    MPI_Reduce_scatter_block(in, out, checkedCount(elements), mpiType(dtype),
                             op(dtype, ReduceKind::Sum), group(axes));
  }

  void allToAllBytes(const void *in, void *out, int64_t block,
                     const std::vector<std::string> &axes) override {
    int count = checkedCount(block);
    MPI_Alltoall(in, count, MPI_BYTE, out, count, MPI_BYTE, group(axes));
  }

  void broadcastBytes(void *data, int64_t bytes,
                      const std::vector<std::string> &axes,
                      int64_t root) override {
    MPI_Bcast(data, checkedCount(bytes), MPI_BYTE, root, group(axes));
  }

  void sendRecvBytes(const void *in, void *out, int64_t bytes, int64_t to,
                     int64_t from) override {
    int count = checkedCount(bytes);
    MPI_Sendrecv(in, count, MPI_BYTE, to, 0, out, count, MPI_BYTE, from, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

private:
  /// MPI counts are ints: a larger message is refused, not truncated.
  static int checkedCount(int64_t count) {
    if (count > std::numeric_limits<int>::max()) {
      std::fprintf(stderr,
                   "error: a collective of %lld elements is more than MPI's "
                   "int count allows\n",
                   static_cast<long long>(count));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return static_cast<int>(count);
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

//===- CommunicatorTest.cpp - the MPI engine on a dp=2 x tp=2 mesh --------===//
//
// Run under `mpirun -np 4`. Every rank builds tensors from its own
// coordinates, so each collective's expected result is computed here from
// the rank layout (the last mesh axis fastest), independently of the
// engine. Built twice: against the MPI engine, and (DTC_TEST_NCCL) against
// the NCCL engine, which needs a GPU per rank and otherwise skips (exit 77).
//
//===----------------------------------------------------------------------===//

#ifdef DTC_TEST_NCCL
#include "dtc/Runtime/NCCL/NCCLCommunicator.h"
#else
#include "dtc/Runtime/MPI/MPICommunicator.h"
#endif

#include <mpi.h>
#ifdef DTC_TEST_NCCL
#include <cuda_runtime.h>
#endif

#include "gtest/gtest.h"

#include <cstdio>

using namespace mlir::dtc;

namespace {

MeshShape mesh2x2() { return {{"dp", "tp"}, {2, 2}}; }

std::unique_ptr<Communicator> createEngine(const MeshShape &mesh,
                                           std::string &error) {
#ifdef DTC_TEST_NCCL
  return createNCCLCommunicator(mesh, error);
#else
  return createMPICommunicator(mesh, error);
#endif
}

class CommunicatorTest : public testing::Test {
protected:
  void SetUp() override {
    std::string error;
    comm = createEngine(mesh2x2(), error);
    ASSERT_TRUE(comm) << error;
    rank = comm->rank();
    dp = rank / 2;
    tp = rank % 2;
  }
  Tensor make(DType dtype, Shape shape, std::function<double(int64_t)> f) {
    Tensor t(dtype, shape);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      if (t.isFloat())
        t.floats()[i] = f(i);
      else
        t.ints()[i] = static_cast<int64_t>(f(i));
    }
    t.roundToElementType();
    return t;
  }
  std::unique_ptr<Communicator> comm;
  int64_t rank, dp, tp;
};

TEST_F(CommunicatorTest, RankLayout) {
  ASSERT_EQ(comm->worldSize(), 4);
  // tp groups are neighbours: ranks {0,1} and {2,3}.
  EXPECT_EQ(comm->groupSize({"tp"}), 2);
  EXPECT_EQ(comm->groupRank({"tp"}), tp);
  EXPECT_EQ(comm->groupRank({"dp"}), dp);
  EXPECT_EQ(comm->groupRank({"dp", "tp"}), rank);
  EXPECT_EQ(mesh2x2().coordinates(3), (std::vector<int64_t>{1, 1}));
}

TEST_F(CommunicatorTest, AllReduceEveryTypeAndKind) {
  for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16,
                      DType::I64, DType::I32}) {
    // Small integers: exact in every type.
    Tensor sum = make(dtype, {3}, [&](int64_t i) { return rank + i; });
    comm->allReduce(sum, {"tp"}, ReduceKind::Sum);
    Tensor max = make(dtype, {3}, [&](int64_t i) { return rank * 2 - i; });
    comm->allReduce(max, {"dp"}, ReduceKind::Max);
    Tensor min = make(dtype, {3}, [&](int64_t i) { return rank * 2 - i; });
    comm->allReduce(min, {"dp", "tp"}, ReduceKind::Min);
    for (int64_t i = 0; i < 3; ++i) {
      // tp partners: 2*dp and 2*dp+1.
      EXPECT_EQ(sum.at(i), (2 * dp) + (2 * dp + 1) + 2 * i) << dtypeName(dtype);
      // dp partners: tp and 2+tp; the max is the latter's.
      EXPECT_EQ(max.at(i), (2 + tp) * 2 - i) << dtypeName(dtype);
      EXPECT_EQ(min.at(i), -i) << dtypeName(dtype);
    }
  }
  // bf16 sums round to bf16: 1 + 2^-8 (twice) rounds to nearest even.
  Tensor halves = make(DType::BF16, {1}, [](int64_t) { return 1.0; });
  if (rank % 2)
    halves.floats()[0] = 0x1p-8;
  comm->allReduce(halves, {"tp"}, ReduceKind::Sum);
  EXPECT_EQ(halves.at(0), 1.0); // 1 + 2^-8 is a tie, to even
}

TEST_F(CommunicatorTest, GatherScatterAllToAll) {
  // all_gather over dp along dim 1: [2, 1] -> [2, 2].
  Tensor piece =
      make(DType::F32, {2, 1}, [&](int64_t i) { return 10 * dp + i; });
  Tensor gathered = comm->allGather(piece, {"dp"}, 1);
  ASSERT_EQ(gathered.shape(), (Shape{2, 2}));
  EXPECT_EQ(gathered.floats(), (std::vector<double>{0, 10, 1, 11}));

  // reduce_scatter over tp along dim 0: [4, 1] -> [2, 1], summed.
  Tensor full = make(DType::F32, {4, 1}, [&](int64_t i) { return i + rank; });
  Tensor mine = comm->reduceScatter(full, {"tp"}, 0);
  ASSERT_EQ(mine.shape(), (Shape{2, 1}));
  for (int64_t j = 0; j < 2; ++j)
    EXPECT_EQ(mine.at(j), 2 * (2 * tp + j) + (2 * dp) + (2 * dp + 1));

  // all_to_all over the 4 ranks: split dim 0 (4 rows), concat along dim 1.
  Tensor rows =
      make(DType::I64, {4, 1}, [&](int64_t i) { return 100 * rank + i; });
  Tensor swapped = comm->allToAll(rows, {"dp", "tp"}, 0, 1);
  ASSERT_EQ(swapped.shape(), (Shape{1, 4}));
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(swapped.at(r), 100 * r + rank); // row `rank` of rank r
}

TEST_F(CommunicatorTest, BlockedChunksGatherBackToTheWhole) {
  // A fused [q | k | v] row of 12 split over tp in 3 blocks: each rank holds
  // its half of q, of k and of v.
  Tensor whole = make(DType::F32, {1, 12}, [](int64_t i) { return i; });
  Tensor part = chunkOf(whole, 1, 2, tp, 3);
  ASSERT_EQ(part.shape(), (Shape{1, 6}));
  std::vector<double> expected;
  for (int64_t block = 0; block < 3; ++block)
    for (int64_t j = 0; j < 2; ++j)
      expected.push_back(4 * block + 2 * tp + j);
  EXPECT_EQ(part.floats(), expected);
  Tensor gathered = comm->allGather(part, {"tp"}, 1);
  EXPECT_EQ(wholeFromChunks(gathered, 1, 2, 3).floats(), whole.floats());
  // Without blocks, a plain contiguous chunk.
  EXPECT_EQ(wholeFromChunks(
                comm->allGather(chunkOf(whole, 1, 2, tp), {"tp"}, 1), 1, 2)
                .floats(),
            whole.floats());
}

TEST_F(CommunicatorTest, BroadcastSendRecvAndAsync) {
  Tensor value =
      make(DType::F32, {2}, [&](int64_t i) { return rank + 0.5 * i; });
  comm->broadcast(value, {"dp"}, 1);
  EXPECT_EQ(value.at(0), 2 + tp); // from dp coordinate 1
  Tensor mine = make(DType::I32, {1}, [&](int64_t) { return rank; });
  Tensor theirs = comm->sendRecv(mine, rank ^ 1);
  EXPECT_EQ(theirs.at(0), rank ^ 1);
}

// Sorted experts' buffers, [4 experts, 3 slots, 2] f32 over tp: expert e's
// first (tp + e) % 4 slots hold rows (its second slot's row zero, still
// sent), the rest zeros (one a -0). With the rows dimension only the rows
// up to each slice's last non-zero one are sent, counts first; the result
// is the whole exchange's (-0 arrives as 0) and the bytes counted are
// those rows' and the counts'.
TEST_F(CommunicatorTest, AllToAllSendsFilledRowsOnly) {
  auto filled = [](int64_t rank, int64_t e) { return (rank % 2 + e) % 4; };
  auto value = [](int64_t rank, int64_t e, int64_t slot, int64_t j) {
    return slot == 1 ? 0.0 : 1 + 100 * rank + 10 * e + slot + 0.5 * j;
  };
  Tensor buffers = make(DType::F32, {4, 3, 2}, [&](int64_t i) {
    int64_t e = i / 6, slot = i / 2 % 3, j = i % 2;
    if (slot < filled(rank, e))
      return value(rank, e, slot, j);
    return slot == 2 && j == 0 ? -0.0 : 0.0;
  });
  double before = comm->counts().count(CollectiveKind::AllToAll)
                      ? comm->counts().at(CollectiveKind::AllToAll).busBytes
                      : 0.0;
  Tensor swapped = comm->allToAll(buffers, {"tp"}, 0, 1, /*rowsDim=*/1);
  ASSERT_EQ(swapped.shape(), (Shape{2, 6, 2}));
  for (int64_t e = 0; e < 2; ++e)
    for (int64_t from = 0; from < 2; ++from)
      for (int64_t slot = 0; slot < 3; ++slot)
        for (int64_t j = 0; j < 2; ++j) {
          int64_t sender = 2 * dp + from, expert = 2 * tp + e;
          double expected = slot < filled(sender, expert)
                                ? value(sender, expert, slot, j)
                                : 0.0;
          EXPECT_EQ(swapped.at((e * 6 + from * 3 + slot) * 2 + j), expected)
              << "expert " << expert << " from " << from << " slot " << slot;
        }
  // Sent to the other tp rank: its experts' rows (a slice whose last filled
  // row is zero sends the rows before it), 8 B each, and 2 counts.
  int64_t rows = 0;
  for (int64_t e = 2 * (1 - tp); e < 2 * (1 - tp) + 2; ++e) {
    int64_t n = filled(rank, e);
    rows += n == 2 ? 1 : n;
  }
  EXPECT_EQ(comm->counts().at(CollectiveKind::AllToAll).busBytes - before,
            rows * 8 + 2 * 8);
}

// The raw-buffer forms compiled steps use: elements in their own type, the
// split dimension inside the tensor (so blocks are rearranged), and an
// all-reduce progressed by polling, as dtc-launch does between kernels.
TEST_F(CommunicatorTest, RawBuffersInTheirOwnType) {
  // all_gather over tp along dim 1 of a [2, 3] f32: rank's row r holds
  // 100r + 10tp + j.
  std::vector<float> piece(6), gathered(12);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t j = 0; j < 3; ++j)
      piece[r * 3 + j] = 100 * r + 10 * tp + j;
  comm->allGather(piece.data(), gathered.data(), DType::F32, {2, 3}, {"tp"}, 1);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(gathered[r * 6 + t * 3 + j], 100 * r + 10 * t + j);

  // reduce_scatter over dp along dim 1 of a [2, 4] bf16 (as 16-bit words):
  // element (r, c) of rank x is r + c + dp; dp rank d keeps columns 2d, 2d+1
  // of the sum over d = 0, 1: 2(r + c) + 1.
  std::vector<uint16_t> full(8), mine(4);
  for (int64_t i = 0; i < 8; ++i)
    full[i] = halfBitsFromFloat(i / 4 + i % 4 + dp, DType::BF16);
  comm->reduceScatter(full.data(), mine.data(), DType::BF16, {2, 4}, {"dp"}, 1);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_EQ(floatFromHalfBits(mine[r * 2 + c], DType::BF16),
                2 * (r + 2 * dp + c) + 1);

  // all_to_all over tp, split dim 1 and concatenate dim 0 of a [2, 2] i32.
  std::vector<int32_t> rows = {int32_t(10 * rank), int32_t(10 * rank + 1),
                               int32_t(10 * rank + 2), int32_t(10 * rank + 3)},
                       swapped(4);
  comm->allToAll(rows.data(), swapped.data(), DType::I32, {2, 2}, {"tp"}, 1, 0);
  // Result [4, 1]: rows from tp rank 0, then tp rank 1, column `tp` of each.
  for (int64_t from = 0; from < 2; ++from)
    for (int64_t r = 0; r < 2; ++r)
      EXPECT_EQ(swapped[from * 2 + r], 10 * (2 * dp + from) + 2 * r + tp);

  // An async all-reduce, polled to completion.
  std::vector<float> async(1000, 1.0f);
  auto pending = comm->allReduceStart(async.data(), DType::F32, async.size(),
                                      {"dp", "tp"}, ReduceKind::Sum);
  while (!pending->test()) {
  }
  pending->wait(); // returns at once
  EXPECT_EQ(async.front(), 4.0f);
  EXPECT_EQ(async.back(), 4.0f);
}

// Started all-gathers and reduce-scatters (ZeRO's buckets): along the
// outermost dimension they run while the caller goes on; along an inner one
// they are done before the start returns. Both give the blocking result.
TEST_F(CommunicatorTest, StartedGathersAndScatters) {
  // all_gather over dp of a [1, 500] f32 along dim 1 (outermost but for a
  // size-1 dimension): rank's element j is 1000 dp + j.
  std::vector<float> piece(500), gathered(1000);
  for (int64_t j = 0; j < 500; ++j)
    piece[j] = 1000 * dp + j;
  auto gather = comm->allGatherStart(piece.data(), gathered.data(), DType::F32,
                                     {1, 500}, {"dp"}, 1);
  while (!gather->test()) {
  }
  gather->wait();
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t j = 0; j < 500; j += 99)
      EXPECT_EQ(gathered[d * 500 + j], 1000 * d + j);

  // reduce_scatter over tp of a [4, 250] f32 along dim 0: element i of tp
  // rank t is i + t; tp rank t keeps rows 2t, 2t+1 of the sum 2i + 1.
  std::vector<float> full(1000), mine(500), inner(500);
  for (int64_t i = 0; i < 1000; ++i)
    full[i] = i + tp;
  auto scatter = comm->reduceScatterStart(full.data(), mine.data(), DType::F32,
                                          {4, 250}, {"tp"}, 0);
  scatter->wait();
  for (int64_t i = 0; i < 500; i += 37)
    EXPECT_EQ(mine[i], 2 * (i + 500 * tp) + 1);
  // Along dim 1 of [2, 500]: done at once, rows keep their halves.
  auto done = comm->reduceScatterStart(full.data(), inner.data(), DType::F32,
                                       {2, 500}, {"tp"}, 1);
  EXPECT_TRUE(done->test());
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 250; c += 31)
      EXPECT_EQ(inner[r * 250 + c], 2 * (r * 500 + 250 * tp + c) + 1);
}

TEST_F(CommunicatorTest, TrafficIsCountedAsBusBytes) {
  Tensor t = make(DType::F32, {8}, [](int64_t) { return 1.0; }); // 32 bytes
  comm->allReduce(t, {"tp"}, ReduceKind::Sum);                   // 2(1/2)*32
  comm->allGather(t, {"dp", "tp"}, 0);                           // 3/4*128
  comm->reduceScatter(t, {"dp"}, 0);                             // 1/2*32
  const auto &counts = comm->counts();
  EXPECT_EQ(counts.at(CollectiveKind::AllReduce).calls, 1);
  EXPECT_DOUBLE_EQ(counts.at(CollectiveKind::AllReduce).busBytes, 32);
  EXPECT_DOUBLE_EQ(counts.at(CollectiveKind::AllGather).busBytes, 96);
  EXPECT_DOUBLE_EQ(counts.at(CollectiveKind::ReduceScatter).busBytes, 16);
}

TEST_F(CommunicatorTest, MeshMustMatchTheWorld) {
  std::string error;
  EXPECT_FALSE(createEngine({{"dp"}, {3}}, error));
  EXPECT_NE(error.find("3 devices but 4 ranks were launched"),
            std::string::npos)
      << error;
  MeshShape parsed;
  EXPECT_EQ(MeshShape::parse("dp=2,tp=4", parsed), "");
  EXPECT_EQ(parsed.sizes, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(MeshShape::parse("dp=2,dp=2", parsed),
            "mesh axis 'dp' is given twice");
  EXPECT_EQ(MeshShape::parse("dp=0", parsed),
            "bad mesh axis 'dp=0' (expected NAME=SIZE, e.g. dp=2)");
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
#ifdef DTC_TEST_NCCL
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 4) {
    std::printf("skipped: the NCCL engine needs 4 GPUs, %d visible\n", devices);
    MPI_Finalize();
    return 77;
  }
#endif
  testing::InitGoogleTest(&argc, argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) // one rank reports; every rank's failures still fail the run
    delete testing::UnitTest::GetInstance()->listeners().Release(
        testing::UnitTest::GetInstance()->listeners().default_result_printer());
  int failed = RUN_ALL_TESTS();
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return anyFailed;
}

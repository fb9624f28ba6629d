//===- SimulatedCommunicatorTest.cpp - the in-process engine --------------===//
//
// The ranks of a dp=2 x tp=2 mesh as threads. Every rank builds tensors
// from its own coordinates, so each collective's expected result is
// computed here from the rank layout (the last mesh axis fastest).
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/Simulated/SimulatedCommunicator.h"

#include "gtest/gtest.h"

#include <mutex>

using namespace mlir::dtc;

namespace {

const MeshShape kMesh{{"dp", "tp"}, {2, 2}};

Tensor filled(DType dtype, Shape shape, double value) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    if (t.isFloat())
      t.floats()[i] = value + i;
    else
      t.ints()[i] = static_cast<int64_t>(value) + i;
  }
  t.roundToElementType();
  return t;
}

/// Runs `body` on every rank and collects each rank's failures, so that
/// checks made on the ranks' threads report on the test's.
void onEveryRank(const std::function<void(Communicator &,
                                          std::vector<std::string> &)> &body) {
  std::mutex mutex;
  std::vector<std::string> failures;
  runSimulatedRanks(kMesh, [&](Communicator &comm) {
    std::vector<std::string> mine;
    body(comm, mine);
    std::lock_guard<std::mutex> lock(mutex);
    for (std::string &failure : mine)
      failures.push_back("rank " + std::to_string(comm.rank()) + ": " +
                         failure);
  });
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}

void expectValues(std::vector<std::string> &failures, const char *what,
                  const Tensor &actual, const std::vector<double> &expected) {
  std::vector<double> got;
  for (int64_t i = 0; i < actual.numElements(); ++i)
    got.push_back(actual.at(i));
  if (got != expected) {
    std::string text = std::string(what) + ":";
    for (double v : got)
      text += " " + std::to_string(v);
    failures.push_back(text);
  }
}

TEST(SimulatedCommunicator, ReductionsOverEachAxis) {
  onEveryRank([](Communicator &comm, std::vector<std::string> &failures) {
    int64_t r = comm.rank(), dp = r / 2, tp = r % 2;
    Tensor sum = filled(DType::F32, {2}, r);
    comm.allReduce(sum, {"tp"}, ReduceKind::Sum); // ranks 2dp and 2dp+1
    expectValues(failures, "tp sum", sum, {4.0 * dp + 1, 4.0 * dp + 3});
    Tensor max = filled(DType::BF16, {1}, r);
    comm.allReduce(max, {"dp"}, ReduceKind::Max); // ranks tp and tp+2
    expectValues(failures, "dp max", max, {2.0 + tp});
    Tensor ints = filled(DType::I64, {1}, r);
    comm.allReduce(ints, {"dp", "tp"}, ReduceKind::Min);
    expectValues(failures, "world min", ints, {0});
    double async = 1;
    comm.allReduceStart(&async, DType::F64, 1, {"dp", "tp"}, ReduceKind::Sum)
        ->wait();
    if (async != 4)
      failures.push_back("async sum: " + std::to_string(async));
  });
}

TEST(SimulatedCommunicator, GatherScatterAllToAllBroadcastSendRecv) {
  onEveryRank([](Communicator &comm, std::vector<std::string> &failures) {
    int64_t r = comm.rank(), dp = r / 2, tp = r % 2;
    Tensor mine = filled(DType::F32, {1}, r);
    expectValues(failures, "tp gather", comm.allGather(mine, {"tp"}, 0),
                 {2.0 * dp, 2.0 * dp + 1});
    // Rank r holds [r, r+1]; the dp group's sum is [2tp+2, 2tp+4], and
    // dp rank d keeps element d.
    Tensor pair = filled(DType::F32, {2}, r);
    expectValues(failures, "dp reduce-scatter",
                 comm.reduceScatter(pair, {"dp"}, 0), {2.0 * tp + 2 + 2 * dp});
    // Element j goes to tp rank j: tp rank t receives element t of each.
    expectValues(failures, "tp all-to-all", comm.allToAll(pair, {"tp"}, 0, 0),
                 {2.0 * dp + tp, 2.0 * dp + 1 + tp});
    Tensor root = filled(DType::I32, {1}, r);
    comm.broadcast(root, {"dp"}, 1);
    expectValues(failures, "dp broadcast from 1", root, {2.0 + tp});
    // A cyclic shift over the world: each receives its predecessor's.
    expectValues(failures, "send/recv", comm.sendRecv(mine, (r + 1) % 4, (r + 3) % 4),
                 {double((r + 3) % 4)});
  });
}

// An all-to-all with a rows dimension sends each slice's rows up to its
// last non-zero one: [2 experts, 3 slots, 1] over tp, expert e of rank r
// filled to (r + e) % 4 slots (at most 3); tp rank t receives expert t's.
TEST(SimulatedCommunicator, AllToAllOfFilledRows) {
  onEveryRank([](Communicator &comm, std::vector<std::string> &failures) {
    int64_t r = comm.rank(), dp = r / 2, tp = r % 2;
    auto count = [](int64_t rank, int64_t e) {
      return std::min<int64_t>((rank + e) % 4, 3);
    };
    Tensor buffers = filled(DType::F32, {2, 3, 1}, 0);
    for (int64_t e = 0; e < 2; ++e)
      for (int64_t slot = 0; slot < 3; ++slot)
        buffers.floats()[e * 3 + slot] =
            slot < count(r, e) ? 1 + 10 * r + e + 0.25 * slot : 0;
    std::vector<double> expected;
    int64_t sent = count(r, 1 - tp);
    for (int64_t from = 0; from < 2; ++from)
      for (int64_t slot = 0; slot < 3; ++slot) {
        int64_t sender = 2 * dp + from;
        expected.push_back(
            slot < count(sender, tp) ? 1 + 10 * sender + tp + 0.25 * slot : 0);
      }
    expectValues(failures, "tp all-to-all of filled rows",
                 comm.allToAll(buffers, {"tp"}, 0, 1, /*rowsDim=*/1), expected);
    // Its rows of 4 B to the other rank, and one 8 B count.
    double bytes = comm.counts().at(CollectiveKind::AllToAll).busBytes;
    if (bytes != sent * 4 + 8)
      failures.push_back("counted " + std::to_string(bytes) + " B, not " +
                         std::to_string(sent * 4 + 8));
  });
}

TEST(SimulatedCommunicator, PointToPointMatchesInTheOrderStarted) {
  // Rank 0 sends 1, 2, 3 to rank 3, which starts three receives and waits
  // for them last first: each gets the message of its place, as MPI
  // matches them (a pipelined step's receives complete at first read).
  onEveryRank([](Communicator &comm, std::vector<std::string> &failures) {
    if (comm.rank() == 0) {
      for (int32_t value : {1, 2, 3})
        comm.sendStart(&value, sizeof value, 3)->wait();
    } else if (comm.rank() == 3) {
      int32_t got[3] = {0, 0, 0};
      std::vector<std::unique_ptr<PendingCollective>> receives;
      for (int32_t &slot : got)
        receives.push_back(comm.receiveStart(&slot, sizeof slot, 0));
      for (int i = 2; i >= 0; --i)
        receives[i]->wait();
      if (got[0] != 1 || got[1] != 2 || got[2] != 3)
        failures.push_back("received " + std::to_string(got[0]) + " " +
                           std::to_string(got[1]) + " " +
                           std::to_string(got[2]));
    }
  });
}

TEST(SimulatedCommunicator, AnAbortReleasesTheOtherRanks) {
  // Rank 0 stops before the all-reduce the others wait in: they return
  // (with zeros) rather than hang.
  onEveryRank([](Communicator &comm, std::vector<std::string> &failures) {
    if (comm.rank() == 0) {
      abortSimulatedWorld(comm);
      return;
    }
    Tensor t = filled(DType::F32, {1}, 5);
    comm.allReduce(t, {"dp", "tp"}, ReduceKind::Sum);
    expectValues(failures, "after abort", t, {0});
  });
}

} // namespace

//===- SimulatedCommunicator.h - a mesh's ranks as threads ------*- C++ -*-===//
//
// For tests of code that runs on every rank of a mesh (the step binding)
// without MPI: each rank is a thread of this process with a Communicator
// whose collectives meet the other threads at a barrier. Every rank must
// call the same collectives in the same order, as SPMD programs do. Only
// all-gather and sum all-reduce are simulated; the rest abort.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_UNITTESTS_RUNTIME_SIMULATEDCOMMUNICATOR_H
#define DTC_UNITTESTS_RUNTIME_SIMULATEDCOMMUNICATOR_H

#include "dtc/Runtime/Communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

namespace mlir::dtc {

class SimulatedWorld {
public:
  explicit SimulatedWorld(MeshShape mesh)
      : mesh(std::move(mesh)), slots(this->mesh.numDevices()) {}

  const MeshShape &getMesh() const { return mesh; }

  /// Runs `body` on every rank, each in a thread of its own, and waits for
  /// all of them.
  void run(const std::function<void(Communicator &)> &body);

  /// Every rank's `bytes`, in world-rank order, once all have called it.
  std::vector<std::vector<char>> exchange(int64_t rank,
                                          std::vector<char> bytes) {
    std::unique_lock<std::mutex> lock(mutex);
    slots[rank] = std::move(bytes);
    uint64_t round = generation;
    if (++arrived == static_cast<int64_t>(slots.size())) {
      published = slots;
      arrived = 0;
      ++generation;
      ready.notify_all();
    } else {
      ready.wait(lock, [&] { return generation != round; });
    }
    return published;
  }

private:
  MeshShape mesh;
  std::mutex mutex;
  std::condition_variable ready;
  std::vector<std::vector<char>> slots, published;
  int64_t arrived = 0;
  uint64_t generation = 0;
};

class SimulatedCommunicator : public Communicator {
public:
  SimulatedCommunicator(SimulatedWorld &world, int64_t rank)
      : Communicator(world.getMesh()), world(world), myRank(rank) {}

  int64_t rank() const override { return myRank; }
  int64_t worldSize() const override { return mesh().numDevices(); }

protected:
  void allReduceBytes(std::vector<char> &bytes, DType dtype,
                      const std::vector<std::string> &axes,
                      ReduceKind kind) override {
    if (kind != ReduceKind::Sum)
      unsimulated("all-reduce other than a sum");
    std::vector<std::vector<char>> all = world.exchange(myRank, bytes);
    int64_t n = static_cast<int64_t>(bytes.size() / dtypeSize(dtype));
    Tensor sum(dtype, {n});
    for (int64_t r : members(axes)) {
      Tensor part = Tensor::fromBytes(dtype, {n}, all[r].data());
      for (int64_t i = 0; i < n; ++i) {
        if (sum.isFloat())
          sum.floats()[i] += part.floats()[i];
        else
          sum.ints()[i] += part.ints()[i];
      }
    }
    sum.roundToElementType();
    bytes = sum.toBytes();
  }
  std::unique_ptr<PendingCollective>
  allReduceBytesStart(std::vector<char> &, DType,
                      const std::vector<std::string> &, ReduceKind) override {
    unsimulated("asynchronous all-reduce");
  }
  std::vector<char>
  allGatherBytes(const std::vector<char> &bytes,
                 const std::vector<std::string> &axes) override {
    std::vector<std::vector<char>> all = world.exchange(myRank, bytes);
    std::vector<char> out;
    for (int64_t r : members(axes))
      out.insert(out.end(), all[r].begin(), all[r].end());
    return out;
  }
  std::vector<char>
  reduceScatterBytes(const std::vector<char> &, DType,
                     const std::vector<std::string> &) override {
    unsimulated("reduce-scatter");
  }
  std::vector<char> allToAllBytes(const std::vector<char> &,
                                  const std::vector<std::string> &) override {
    unsimulated("all-to-all");
  }
  void broadcastBytes(std::vector<char> &, const std::vector<std::string> &,
                      int64_t) override {
    unsimulated("broadcast");
  }
  std::vector<char> sendRecvBytes(const std::vector<char> &, int64_t,
                                  int64_t) override {
    unsimulated("send/recv");
  }

private:
  [[noreturn]] static void unsimulated(const char *what) {
    std::fprintf(stderr, "SimulatedCommunicator: %s is not simulated\n", what);
    std::abort();
  }

  /// The world ranks of this rank's group along `axes`, in group order:
  /// those whose coordinates on the other axes are this rank's. (World
  /// order restricted to a group is its row-major order over `axes`.)
  std::vector<int64_t> members(const std::vector<std::string> &axes) const {
    const MeshShape &m = mesh();
    std::vector<int64_t> mine = m.coordinates(myRank), group;
    for (int64_t r = 0; r < m.numDevices(); ++r) {
      std::vector<int64_t> theirs = m.coordinates(r);
      bool same = true;
      for (size_t i = 0; i < m.axes.size(); ++i)
        if (std::find(axes.begin(), axes.end(), m.axes[i]) == axes.end() &&
            theirs[i] != mine[i])
          same = false;
      if (same)
        group.push_back(r);
    }
    return group;
  }

  SimulatedWorld &world;
  int64_t myRank;
};

inline void
SimulatedWorld::run(const std::function<void(Communicator &)> &body) {
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < mesh.numDevices(); ++r)
    threads.emplace_back([this, &body, r] {
      SimulatedCommunicator comm(*this, r);
      body(comm);
    });
  for (std::thread &thread : threads)
    thread.join();
}

} // namespace mlir::dtc

#endif // DTC_UNITTESTS_RUNTIME_SIMULATEDCOMMUNICATOR_H

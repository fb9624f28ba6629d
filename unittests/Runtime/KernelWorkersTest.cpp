//===- KernelWorkersTest.cpp - the threads that share a kernel's rows -----===//

#include "dtc/Runtime/CPU/KernelWorkers.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace mlir::dtc;

namespace {

// Every part runs once per job, job after job (workers spinning or asleep
// in between), and run() returns only when all of them have finished.
TEST(KernelWorkersTest, EachPartOncePerJob) {
  for (int threads : {1, 2, 3, 4}) {
    KernelWorkers workers(threads);
    EXPECT_EQ(workers.threads(), threads);
    std::vector<std::atomic<int>> counts(threads);
    for (int job = 0; job < 2000; ++job) {
      int parts = 1 + job % threads;
      for (auto &c : counts)
        c.store(0);
      workers.run(parts, [&](int part) {
        ASSERT_GE(part, 0);
        ASSERT_LT(part, parts);
        counts[part].fetch_add(1);
      });
      for (int p = 0; p < threads; ++p)
        ASSERT_EQ(counts[p].load(), p < parts ? 1 : 0)
            << "threads " << threads << " job " << job << " part " << p;
      // Now and then long enough for the workers to fall asleep.
      if (job % 500 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

// Parts run on distinct threads at once: each part waits until all have
// started, which would never happen were they run one after another.
TEST(KernelWorkersTest, PartsRunConcurrently) {
  KernelWorkers workers(3);
  std::atomic<int> started{0};
  std::set<std::thread::id> ids;
  std::mutex idsMutex;
  workers.run(3, [&](int) {
    {
      std::lock_guard<std::mutex> lock(idsMutex);
      ids.insert(std::this_thread::get_id());
    }
    started.fetch_add(1);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 3 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  });
  EXPECT_EQ(started.load(), 3);
  EXPECT_EQ(ids.size(), 3u);
}

} // namespace

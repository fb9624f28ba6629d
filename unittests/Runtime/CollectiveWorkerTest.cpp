//===- CollectiveWorkerTest.cpp - a rank's collectives on their own thread ===//

#include "dtc/Runtime/CPU/CollectiveWorker.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace mlir::dtc;

namespace {

// Tasks run one at a time, in the order they were posted, on one thread
// that is not the poster's; waitFor(t) returns once task t and every
// earlier one have finished, and not before.
TEST(CollectiveWorkerTest, InOrderOnOneOtherThread) {
  CollectiveWorker worker;
  std::mutex mutex;
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::atomic<int> running{0}, mostAtOnce{0};
  std::vector<int64_t> tickets;
  for (int i = 0; i < 200; ++i)
    tickets.push_back(worker.post([&, i] {
      mostAtOnce = std::max(mostAtOnce.load(), ++running);
      if (i % 50 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      {
        std::lock_guard<std::mutex> lock(mutex);
        order.push_back(i);
        threads.push_back(std::this_thread::get_id());
      }
      --running;
    }));
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(tickets[i], i);
  worker.waitFor(99);
  {
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_GE(order.size(), 100u);
    for (int i = 0; i < 100; ++i)
      EXPECT_EQ(order[i], i);
  }
  worker.waitFor(199);
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(order[i], i);
    EXPECT_EQ(threads[i], threads[0]);
  }
  EXPECT_NE(threads[0], std::this_thread::get_id());
  EXPECT_EQ(mostAtOnce.load(), 1);
}

// A task posted runs while the poster goes on (the overlap it exists for):
// the poster sees the task start without waiting for it, and the task sees
// the poster's later write before it ends.
// idle() says whether every task posted is done.
TEST(CollectiveWorkerTest, RunsWhileThePosterWorks) {
  CollectiveWorker worker;
  EXPECT_TRUE(worker.idle());
  std::atomic<bool> started{false}, posterWent{false}, sawPoster{false};
  int64_t ticket = worker.post([&] {
    started = true;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!posterWent && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    sawPoster = posterWent.load();
  });
  while (!started)
    std::this_thread::yield();
  EXPECT_FALSE(worker.idle());
  posterWent = true;
  worker.waitFor(ticket);
  EXPECT_TRUE(worker.idle());
  EXPECT_TRUE(sawPoster);
}

// Destroying an idle worker, or one with tasks still queued, finishes them.
TEST(CollectiveWorkerTest, DestructionFinishesQueuedTasks) {
  std::atomic<int> done{0};
  {
    CollectiveWorker worker;
    for (int i = 0; i < 10; ++i)
      worker.post([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++done;
      });
  }
  EXPECT_EQ(done.load(), 10);
  CollectiveWorker idle;
}

} // namespace

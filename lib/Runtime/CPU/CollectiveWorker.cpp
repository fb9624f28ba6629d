//===- CollectiveWorker.cpp - collectives on a thread of their own --------===//

#include "dtc/Runtime/CPU/CollectiveWorker.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

using namespace mlir::dtc;

struct CollectiveWorker::State {
  std::mutex mutex;
  /// Signals a posted task to the thread, and a finished one to waiters.
  std::condition_variable posted, finished;
  std::deque<std::function<void()>> queue;
  /// Tickets handed out, and done (tasks finish in ticket order).
  int64_t tickets = 0, done = 0;
  bool stopping = false;
  std::thread thread;

  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      posted.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      std::function<void()> task = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      task();
      lock.lock();
      ++done;
      finished.notify_all();
    }
  }
};

CollectiveWorker::CollectiveWorker() : state(std::make_unique<State>()) {
  state->thread = std::thread([this] { state->loop(); });
}

CollectiveWorker::~CollectiveWorker() {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->stopping = true;
  }
  state->posted.notify_one();
  state->thread.join();
}

int64_t CollectiveWorker::post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(state->mutex);
  state->queue.push_back(std::move(task));
  state->posted.notify_one();
  return state->tickets++;
}

bool CollectiveWorker::idle() const {
  std::lock_guard<std::mutex> lock(state->mutex);
  return state->done == state->tickets;
}

void CollectiveWorker::waitFor(int64_t ticket) {
  std::unique_lock<std::mutex> lock(state->mutex);
  state->finished.wait(lock, [&] { return state->done > ticket; });
}

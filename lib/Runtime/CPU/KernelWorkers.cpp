//===- KernelWorkers.cpp - threads that share one kernel's rows -----------===//
//
// A kernel takes microseconds, so a worker spins on the job counter for a
// while before it sleeps on a condition variable (a sleeping worker costs a
// futex wake-up, tens of microseconds); the caller spins, then yields,
// until the parts are done.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/CPU/KernelWorkers.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

using namespace mlir::dtc;

namespace {

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// About 50 microseconds of polling (a pause is about 40 cycles or more).
constexpr int kSpins = 4096;

} // namespace

struct KernelWorkers::State {
  int threads = 1;
  std::mutex mutex;
  std::condition_variable wake;
  /// Bumped once per job (and to stop): what workers wait for.
  std::atomic<uint64_t> job{0};
  /// Workers still busy with the current job.
  std::atomic<int> busy{0};
  llvm::function_ref<void(int)> part;
  int parts = 0;
  bool stopping = false;
  std::vector<std::thread> workers;

  void work(int index) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t now = job.load(std::memory_order_acquire);
      for (int spin = 0; now == seen && spin < kSpins; ++spin) {
        relax();
        now = job.load(std::memory_order_acquire);
      }
      if (now == seen) {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock,
                  [&] { return job.load(std::memory_order_acquire) != seen; });
        now = job.load(std::memory_order_acquire);
      }
      seen = now;
      if (stopping)
        return;
      if (index < parts)
        part(index);
      busy.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
};

KernelWorkers::KernelWorkers(int threads) : state(std::make_unique<State>()) {
  state->threads = std::max(threads, 1);
  for (int i = 1; i < state->threads; ++i)
    state->workers.emplace_back([this, i] { state->work(i); });
}

KernelWorkers::~KernelWorkers() {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->stopping = true;
    state->job.fetch_add(1, std::memory_order_release);
  }
  state->wake.notify_all();
  for (std::thread &worker : state->workers)
    worker.join();
}

int KernelWorkers::threads() const { return state->threads; }

void KernelWorkers::run(int parts, llvm::function_ref<void(int)> part) {
  if (parts <= 1 || state->workers.empty()) {
    for (int p = 0; p < parts; ++p)
      part(p);
    return;
  }
  state->part = part;
  state->parts = parts;
  state->busy.store(static_cast<int>(state->workers.size()),
                    std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    state->job.fetch_add(1, std::memory_order_release);
  }
  state->wake.notify_all();
  part(0);
  // (Yielding after a while: with more threads than cores, a worker may be
  // waiting for this one's core.)
  for (int spin = 0; state->busy.load(std::memory_order_acquire) != 0; ++spin)
    if (spin < kSpins)
      relax();
    else
      std::this_thread::yield();
}

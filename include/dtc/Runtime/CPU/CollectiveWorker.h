//===- CollectiveWorker.h - collectives on their own thread ---*- C++ -*-===//
//
// The compiled CPU program's communication thread: the collectives the
// program starts asynchronously run on it, in program order (the order
// every rank of a group calls them in), while the step's thread runs the
// kernels that follow, until the step waits for them; the communicator's
// calls poll with back-off, leaving the core to those kernels. A blocking
// (or small) collective queues behind those in flight, or runs on the
// step's thread when the worker is idle. Either way one thread calls the
// communicator at a time (MPI's MPI_THREAD_SERIALIZED).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_CPU_COLLECTIVEWORKER_H
#define DTC_RUNTIME_CPU_COLLECTIVEWORKER_H

#include <cstdint>
#include <functional>
#include <memory>

namespace mlir::dtc {

class CollectiveWorker {
public:
  CollectiveWorker();
  ~CollectiveWorker();
  CollectiveWorker(const CollectiveWorker &) = delete;
  CollectiveWorker &operator=(const CollectiveWorker &) = delete;

  /// Queues `task` behind the ones posted before; returns its ticket.
  int64_t post(std::function<void()> task);
  /// Returns once the task of `ticket`, and so every earlier one, is done.
  void waitFor(int64_t ticket);
  /// Whether every task posted is done: the poster may then call the
  /// communicator itself (no hand-over), until it posts again.
  bool idle() const;

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace mlir::dtc

#endif // DTC_RUNTIME_CPU_COLLECTIVEWORKER_H

//===- KernelWorkers.h - threads that share one kernel's rows ---*- C++ -*-===//
//
// The compiled CPU program's intra-op threads (dtc-launch --threads N): a
// kernel whose rows are split (Thunk::rows) runs as parts, part 0 on the
// calling thread and the others on N - 1 workers, and the step goes on when
// all are done. Parts are fixed ranges of rows, so a result does not depend
// on which thread computed it or on N.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_CPU_KERNELWORKERS_H
#define DTC_RUNTIME_CPU_KERNELWORKERS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>

namespace mlir::dtc {

class KernelWorkers {
public:
  /// `threads` in all, the caller's included (so threads - 1 workers).
  explicit KernelWorkers(int threads);
  ~KernelWorkers();
  KernelWorkers(const KernelWorkers &) = delete;
  KernelWorkers &operator=(const KernelWorkers &) = delete;

  int threads() const;
  /// Runs part(p) for every p in [0, parts), parts <= threads(), at once;
  /// returns when all have returned.
  void run(int parts, llvm::function_ref<void(int)> part);

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace mlir::dtc

#endif // DTC_RUNTIME_CPU_KERNELWORKERS_H

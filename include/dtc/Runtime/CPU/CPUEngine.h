//===- CPUEngine.h - running a compiled program on CPU ranks ----*- C++ -*-===//
//
// The engine owns one buffer per argument and per result and one arena for
// every intermediate value, all allocated when it starts; a step runs the
// thunks in order (a kernel on its buffers, an OpenBLAS GEMM, an MPI
// collective, a copy) and then swaps each donated argument's buffer with
// its update's. No LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_CPU_CPUENGINE_H
#define DTC_RUNTIME_CPU_CPUENGINE_H

#include "dtc/Runtime/CompiledProgram.h"

#include <memory>

namespace mlir::dtc {

/// When each thunk ran, step after step, on this rank: on the step's
/// thread, and each collective on the communication thread.
struct CPUTrace {
  struct Event {
    size_t thunk;
    /// Microseconds since the engine started, and the thunk's duration.
    double start, duration;
  };
  std::vector<Event> events, collectiveEvents;
};

/// How a CPUEngine runs its program.
struct CPUEngineOptions {
  /// Fill each arena slot with NaN (all bits set) as soon as its last
  /// reader has run, so a plan that let two live values share bytes
  /// changes the trajectory.
  bool checkArena = false;
  /// Where every thunk run is recorded, if anywhere.
  CPUTrace *trace = nullptr;
  /// How many threads share a kernel's rows: one per `minWork` elements it
  /// computes, at most `threads` and one per row.
  int threads = 1;
  int64_t minWork = 16384;
  /// Whether a collective the program starts asynchronously runs behind
  /// the thunks that follow it until its wait; without, it completes where
  /// it starts (what overlap hides is then measurable).
  bool overlap = true;
};

/// Runs `program` on this rank of `comm` (null: one device).
std::unique_ptr<StepEngine> createCPUEngine(const CompiledProgram &program,
                                            Communicator *comm,
                                            const CPUEngineOptions &options);

/// Writes the ranks' traces as one Chrome trace (Perfetto, about:tracing)
/// to `path`: a process per rank, with a track for the step's thread (an
/// event per thunk run, named by what it computes: its op or fusion group,
/// the GEMM's shape, the collective handed over or waited for) and one for
/// the communication thread (each collective as it ran).
/// Collective: every rank calls it; the first writes. "" or what failed.
std::string writeChromeTrace(const std::string &path,
                             const CompiledProgram &program,
                             const CPUTrace &trace, Communicator *comm);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_CPU_CPUENGINE_H

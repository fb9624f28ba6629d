//===- CPUProgram.h - running a compiled CPU program -------------*- C++
//-*-===//
//
// What `dtc-launch` runs: a per-rank program dtc-compile --target cpu wrote
// (program.txt: the step's signature, its arena size and thunk list;
// kernels.so: the compiled kernels). The engine owns one buffer per
// argument and per result and one arena for every intermediate value, all
// allocated when it starts; a step runs the thunks in order (a kernel on
// its buffers, an OpenBLAS GEMM, an MPI collective, a copy) and then swaps
// each donated argument's buffer with its update's. No LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_CPU_CPUPROGRAM_H
#define DTC_RUNTIME_CPU_CPUPROGRAM_H

#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/StepSignature.h"
#include "dtc/Runtime/TrainingLoop.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::dtc {

/// The version of program.txt this build reads.
inline constexpr int64_t kCPUProgramFormat = 3;

/// Where a thunk's operand lives, and (for GEMMs and collectives) its type.
struct BufferRef {
  enum class Space : uint8_t { Argument, Result, Arena } space;
  int64_t index = 0; // argument or result index, or arena offset
  DType dtype = DType::F32;
  Shape shape;
};

struct Thunk {
  /// "kernel", "gemm", "copy", "dead" (an arena slot's last reader has run),
  /// a collective ("all_reduce", ...) or "wait" (for a started one).
  std::string kind;
  enum class Kind : uint8_t { Kernel, Gemm, Copy, Dead, Collective, Wait } tag;
  /// Its `key=value` fields as written.
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<BufferRef> buffers;
  /// A kernel's packed entry, once loaded: its buffers' addresses, then
  /// which part of how many to compute (0 of 1: all of it).
  void (*entry)(void **, int64_t, int64_t) = nullptr;
  /// A kernel's rows that parts may share (0: it runs whole) and its work
  /// (elements computed), which decide how many threads it gets.
  int64_t rows = 0, work = 0;
  /// A GEMM's plan, made once at load: out[b] = op(lhs[lhsAt[b]]) x
  /// op(rhs[rhsAt[b]]), each an m x k by k x n product (the operands'
  /// batch dimensions broadcast as numpy does; untransposed lhs matrices
  /// times one rhs are one product of their stacked rows).
  struct Gemm {
    bool ta = false, tb = false;
    int64_t m = 0, n = 0, k = 0;
    std::vector<int64_t> lhsAt, rhsAt;
  } gemm;
  /// A `dead` thunk's bytes.
  int64_t bytes = 0;
  /// A collective's mesh axes, and why it is there (the IR's `reason`).
  std::vector<std::string> axes;
  std::string reason;
  /// A collective's parameters, read once at load.
  struct Collective {
    enum Kind : uint8_t {
      AllReduce,
      AllGather,
      ReduceScatter,
      Broadcast,
      AllToAll,
      Shard,
      SendRecv
    } kind = AllReduce;
    ReduceKind reduce = ReduceKind::Sum;
    /// The dimension (a gather's, a scatter's, a shard's, an all-to-all's
    /// split) and an all-to-all's concatenated one.
    int64_t dim = 0, concatDim = 0;
    int64_t root = 0, blocks = 1;
    /// A send_recv's mesh axis (its index) and shift along it, in [0, size).
    int64_t axis = 0, shift = 0;
    /// A started all-reduce's (and its `wait`'s) request number, or -1.
    int64_t request = -1;
  } collective;

  const std::string *field(const std::string &key) const;
};

struct CPUProgram {
  StepSignature signature;
  int64_t arenaBytes = 0;
  std::vector<Thunk> thunks;
  /// dlopen's handle on kernels.so.
  void *library = nullptr;

  /// Reads DIR/program.txt and loads DIR/kernels.so; "" or what is wrong
  /// (naming the file and what to do).
  /// With `emulateCuda`, DIR holds a program compiled with --target cuda
  /// --cuda-emulation, whose kernels are DIR/kernels-emulated.so.
  static std::string load(const std::string &dir, CPUProgram &out,
                          bool emulateCuda = false);
};

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
std::unique_ptr<StepEngine> createCPUEngine(const CPUProgram &program,
                                            Communicator *comm,
                                            const CPUEngineOptions &options);

/// Writes the ranks' traces as one Chrome trace (Perfetto, about:tracing)
/// to `path`: a process per rank, with a track for the step's thread (an
/// event per thunk run, named by what it computes: its op or fusion group,
/// the GEMM's shape, the collective handed over or waited for) and one for
/// the communication thread (each collective as it ran).
/// Collective: every rank calls it; the first writes. "" or what failed.
std::string writeChromeTrace(const std::string &path, const CPUProgram &program,
                             const CPUTrace &trace, Communicator *comm);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_CPU_CPUPROGRAM_H

//===- CompiledProgram.h - a per-rank program as its launchers read it ---===//
//
// What `dtc-launch` (CPU ranks) and `dtc-launch-cuda` (GPUs) run: a
// per-rank program dtc-compile --target cpu or cuda wrote (program.txt:
// the step's signature, its arena size and thunk list) and its kernels
// (kernels.so; kernels.fatbin, which the CUDA engine loads itself; or the
// CUDA kernels' emulated build, kernels-emulated.so). No LLVM or MLIR, no
// BLAS, no MPI.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_COMPILEDPROGRAM_H
#define DTC_RUNTIME_COMPILEDPROGRAM_H

#include "dtc/Runtime/Communicator.h"
#include "dtc/Runtime/StepSignature.h"
#include "dtc/Runtime/TrainingLoop.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::dtc {

/// The version of program.txt this build reads.
inline constexpr int64_t kCompiledProgramFormat = 3;

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
    /// An all-to-all's rows dimension, whose trailing zero rows it does not
    /// send (-1: none).
    int64_t rowsDim = -1;
    int64_t root = 0, blocks = 1;
    /// A broadcast's receivers along its axis when not every member is
    /// one (a pipelined step's transfer: the root sends to each).
    std::vector<int64_t> receivers;
    /// A send_recv's mesh axis (its index) and shift along it, in [0, size).
    int64_t axis = 0, shift = 0;
    /// A started all-reduce's (and its `wait`'s) request number, or -1.
    int64_t request = -1;
  } collective;

  const std::string *field(const std::string &key) const;
};

struct CompiledProgram {
  StepSignature signature;
  int64_t arenaBytes = 0;
  std::vector<Thunk> thunks;
  /// dlopen's handle on the kernels' library (none for Kernels::CUDA).
  void *library = nullptr;

  /// Which program a launcher runs, and whose kernels.
  enum class Kernels {
    /// --target cpu: DIR/kernels.so.
    CPU,
    /// --target cuda --cuda-emulation on CPU ranks: the CUDA kernels as
    /// host code, DIR/kernels-emulated.so.
    EmulatedCUDA,
    /// --target cuda on GPUs: the launcher loads DIR/kernels.fatbin.
    CUDA
  };

  /// Reads DIR/program.txt and loads its kernels' library as `kernels`
  /// says; "" or what is wrong (naming the file and what to do).
  static std::string load(const std::string &dir, CompiledProgram &out,
                          Kernels kernels = Kernels::CPU);
};

/// The starting values a compiled program carries (`dir`/init/arg<N>.npy:
/// parameters' initializers, the loss scale's start), for runTraining; a
/// file that does not read is a warning, and the argument has none.
BuiltinValue compiledStartingValues(const std::string &dir);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_COMPILEDPROGRAM_H

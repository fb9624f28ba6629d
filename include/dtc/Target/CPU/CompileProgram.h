//===- CompileProgram.h - a training step as a compiled CPU program -*- C++
//-*-===//
//
// `dtc-compile --target cpu`: the per-rank step becomes a program the
// LLVM-free launcher (`dtc-launch`, lib/Runtime/CPU) runs. Fusion is
// decided in the dtc dialect (dtc-fuse); every group and every other op
// becomes a kernel compiled to native code in process (one LLVM module,
// optimised, emitted as one object and linked into kernels.so); matmuls
// become OpenBLAS calls and collectives MPI calls; every intermediate value
// gets its offset in one arena (ArenaPlan.h). program.txt lists the step's
// signature and its thunks in order, docs/Codegen.md describes the format.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TARGET_CPU_COMPILEPROGRAM_H
#define DTC_TARGET_CPU_COMPILEPROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::dtc {

struct StepSignature;

/// The version of program.txt this build writes and its launcher reads.
inline constexpr int64_t kCPUProgramVersion = 3;

/// What a compiled program holds, for the report.
struct CPUProgramSummary {
  int64_t kernels = 0, gemms = 0, collectives = 0, asyncCollectives = 0;
  /// Its arena, and the most bytes (aligned) live at once in it.
  int64_t arenaBytes = 0, arenaLowerBound = 0;
};

/// Compiles `step` (a per-rank training step, `signature` its
/// description; neither is changed) into `dir`: program.txt, kernels.so
/// and init/arg<N>.npy (the starting values the step carries). Emits a
/// diagnostic naming the op or tool on failure.
FailureOr<CPUProgramSummary> compileCPUProgram(func::FuncOp step,
                                               const StepSignature &signature,
                                               const std::string &dir);

} // namespace mlir::dtc

#endif // DTC_TARGET_CPU_COMPILEPROGRAM_H

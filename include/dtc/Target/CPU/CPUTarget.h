//===- CPUTarget.h - kernels compiled to native code ------------*- C++ -*-===//
//
// `dtc-compile --target cpu`: the per-rank step becomes a program
// (BuildProgram.h) the LLVM-free launcher (`dtc-launch`, lib/Runtime/CPU)
// runs. Every group and every other op becomes a kernel compiled to native
// code in process (one LLVM module, optimised, emitted as objects and
// linked into kernels.so); matmuls become OpenBLAS calls and collectives
// MPI calls.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TARGET_CPU_CPUTARGET_H
#define DTC_TARGET_CPU_CPUTARGET_H

#include "dtc/Target/Program/BuildProgram.h"

namespace mlir::dtc {

/// Compiles `step` into `dir` (program.txt, kernels.so, init/), as
/// buildProgram does.
FailureOr<ProgramSummary> compileCPUProgram(func::FuncOp step,
                                            const StepSignature &signature,
                                            const std::string &dir);

} // namespace mlir::dtc

#endif // DTC_TARGET_CPU_CPUTARGET_H

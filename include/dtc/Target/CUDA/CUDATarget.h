//===- CUDATarget.h - kernels as CUDA C++ for NVIDIA GPUs -------*- C++ -*-===//
//
// `dtc-compile --target cuda`: the per-rank step becomes the same thunk
// program as for CPU ranks (BuildProgram.h), its kernels printed as CUDA
// C++ (kernels.cu, one kernel per fusion group or op) and compiled by nvcc
// into kernels.fatbin (SASS for the GPU architecture and PTX for the
// driver to JIT on newer ones); matmuls are cuBLAS calls and collectives
// NCCL calls in the launcher (dtc-launch-cuda). With `emulation`, the same
// kernels.cu is also compiled as host C++ into kernels-emulated.so, which
// the CPU launcher runs (`dtc-run OUT --emulate-cuda`): what the generated
// kernels compute, checked without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TARGET_CUDA_CUDATARGET_H
#define DTC_TARGET_CUDA_CUDATARGET_H

#include "dtc/Target/Program/BuildProgram.h"

#include <vector>

namespace mlir::dtc {

struct CUDATargetOptions {
  /// The GPU architecture nvcc compiles for ("sm_90").
  std::string arch = "sm_90";
  /// Also build kernels-emulated.so for the CPU launcher.
  bool emulation = false;
};

/// A CUDA program's figures: the thunk program's, and ptxas's per kernel.
struct CUDAProgramSummary {
  ProgramSummary program;
  int64_t maxRegisters = 0, spillBytes = 0;
  /// The kernels that spill, as "NAME (OP): N bytes".
  std::vector<std::string> spilling;
};

/// Compiles `step` into `dir` (program.txt, kernels.cu, kernels.fatbin,
/// ptxas.txt, init/ and, with emulation, kernels-emulated.so).
FailureOr<CUDAProgramSummary>
compileCUDAProgram(func::FuncOp step, const StepSignature &signature,
                   const std::string &dir, const CUDATargetOptions &options);

/// The CUDA C++ helpers every kernels.cu starts with (block reductions,
/// scalars by their bits, 16-bit float conversions, dropout's Philox,
/// NaN-propagating max and min, floored remainders), also valid host C++
/// under -DDTC_CUDA_EMULATE.
const char *cudaKernelPrelude();

} // namespace mlir::dtc

#endif // DTC_TARGET_CUDA_CUDATARGET_H

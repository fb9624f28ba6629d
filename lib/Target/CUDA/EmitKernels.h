//===- EmitKernels.h - one CUDA C++ kernel per thunk ------------*- C++ -*-===//

#ifndef DTC_LIB_TARGET_CUDA_EMITKERNELS_H
#define DTC_LIB_TARGET_CUDA_EMITKERNELS_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::dtc {

/// A kernel as CUDA C++ and how it is launched.
struct CUDAKernel {
  /// `DTC_KERNEL void NAME(const T *in0, ..., T *out0, ...) {...}`, and the
  /// host entry `NAME_packed(void **args, int64_t, int64_t)` the CPU
  /// launcher calls in the emulated build.
  std::string source, packedEntry;
  int64_t grid = 1, block = 256;
  /// Dynamic shared memory, bytes (the fused attention kernels' tiles).
  int64_t sharedBytes = 0;
  /// The FLOPs a profile rates it by, where counted (fused attention).
  double flops = 0;
};

/// The kernel `name` computing `op`: a loop, multi-tensor or row-reduction
/// fusion group, or one of the ops the CUDA target has a kernel for.
/// Emits an error naming the op otherwise.
FailureOr<CUDAKernel> emitCUDAKernel(Operation *op, StringRef name);

} // namespace mlir::dtc

#endif // DTC_LIB_TARGET_CUDA_EMITKERNELS_H

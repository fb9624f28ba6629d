//===- KernelCheck.h - a compiled CPU kernel against the oracle -*- C++ -*-===//
//
// The differential check of the CPU route, shared by the GoogleTest harness
// and dtc-opt --dtc-test-check-kernels: a fusion group (FusionToLinalg.h),
// or any other op the backend has a kernel for
// (DTCToSCF.h), is lowered to its kernel, compiled in process (MLIR's
// ExecutionEngine: test code only) and run on random inputs against the
// reference executor.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TEST_LIB_TRANSFORMS_KERNELCHECK_H
#define DTC_TEST_LIB_TRANSFORMS_KERNELCHECK_H

#include "dtc/Runtime/Tensor.h"
#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace mlir::dtc::test {

/// Whether checkKernel can check `op`: a fusion group (buildLoopKernel
/// refuses the row-reduction groups it does not compute), or an op with a
/// kernel of its own.
bool hasCheckableKernel(Operation *op);

/// Runs `op`'s compiled kernel and the reference executor on the same
/// random inputs drawn from `seed` (floats with infinities and NaNs mixed
/// in, but for a seed divisible by 3, whose floats are all finite so that
/// a long row's reduction is checked on numbers too; bf16/f16 rounded;
/// indices in range, negative ones included; small
/// non-negative integers; bools): the first element where they disagree
/// (beyond 1e-5 relative in f32, 1e-12 in f64, 1e-2 in bf16/f16 -- one
/// rounding of the result apart --, NaN where the reference has NaN) or the
/// step that failed, or "" when they agree. The context must hold the
/// kernel dialects (registerKernelDialects).
std::string checkKernel(Operation *op, unsigned seed);

/// Compiles `op`'s kernel and runs it on `inputs` (one per operand, of
/// its type); "" with the results in `outputs`, or the step that failed.
std::string runKernel(Operation *op, const std::vector<Tensor> &inputs,
                      std::vector<Tensor> &outputs);

} // namespace mlir::dtc::test

#endif // DTC_TEST_LIB_TRANSFORMS_KERNELCHECK_H

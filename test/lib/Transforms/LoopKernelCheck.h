//===- LoopKernelCheck.h - a compiled loop kernel against the oracle ------===//
//
// The differential check of the CPU route, shared by the GoogleTest harness
// and dtc-opt --dtc-test-check-loop-kernels: a loop or multi-tensor fusion
// group is lowered to its kernel, compiled in process (MLIR's
// ExecutionEngine: test code only) and run on random inputs against the
// reference executor.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TEST_LIB_TRANSFORMS_LOOPKERNELCHECK_H
#define DTC_TEST_LIB_TRANSFORMS_LOOPKERNELCHECK_H

#include "dtc/Dialect/DTC/IR/DTCOps.h"

#include <string>

namespace mlir::dtc::test {

/// Runs `fusion`'s compiled kernel and the reference executor on the same
/// random inputs (floats with infinities and NaNs mixed in, small
/// non-negative integers, bools; drawn from `seed`): the first element
/// where they disagree (beyond 1e-5 relative in f32, 1e-12 in f64, NaN
/// where the reference has NaN) or the step that failed, or "" when they
/// agree. The context must hold the kernel dialects (registerKernelDialects).
std::string checkLoopKernel(FusionOp fusion, unsigned seed);

} // namespace mlir::dtc::test

#endif // DTC_TEST_LIB_TRANSFORMS_LOOPKERNELCHECK_H

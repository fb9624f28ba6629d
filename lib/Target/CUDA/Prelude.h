//===- Prelude.h - what every generated kernels.cu starts with --*- C++ -*-===//

#ifndef DTC_LIB_TARGET_CUDA_PRELUDE_H
#define DTC_LIB_TARGET_CUDA_PRELUDE_H

namespace mlir::dtc {

/// The CUDA C++ helpers the generated kernels call (block reductions,
/// scalars by their bits, NaN-propagating max and min, floored remainders),
/// also valid host C++ under -DDTC_CUDA_EMULATE.
const char *cudaKernelPrelude();

} // namespace mlir::dtc

#endif // DTC_LIB_TARGET_CUDA_PRELUDE_H

//===- CUDALibraries.h - CUDA libraries found at run time -------*- C++ -*-===//
//
// GPU hosts rarely have the toolkit where the linker looks, but often
// PyTorch's nvidia wheels: the engine finds cuBLAS and NCCL at run time
// rather than linking them (as IREE and PyTorch itself find theirs).
//
//===----------------------------------------------------------------------===//

#ifndef DTC_LIB_RUNTIME_CUDA_CUDALIBRARIES_H
#define DTC_LIB_RUNTIME_CUDA_CUDALIBRARIES_H

#include <string>
#include <vector>

namespace mlir::dtc {

/// Loads the first of `names` (e.g. libcublas.so.13) found by, in order:
/// the file in $`variable`, the loader's search (LD_LIBRARY_PATH, the
/// launcher's rpath), $CUDA_HOME/lib64, and `wheelDir`/lib of the nvidia
/// packages of Python installations (site- and dist-packages under /usr,
/// /usr/local, $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local: PyTorch's wheels).
/// Returns dlopen's handle, or null with `tried` saying what was tried.
void *loadCUDALibrary(const char *variable,
                      const std::vector<std::string> &names,
                      const std::string &wheelDir, std::string &tried);

} // namespace mlir::dtc

#endif // DTC_LIB_RUNTIME_CUDA_CUDALIBRARIES_H

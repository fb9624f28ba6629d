//===- CuBLAS.h - cuBLAS, loaded at run time --------------------*- C++ -*-===//

#ifndef DTC_LIB_RUNTIME_CUDA_CUBLAS_H
#define DTC_LIB_RUNTIME_CUDA_CUBLAS_H

#include <cublas_v2.h>

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

/// The cuBLAS entry points the engine calls. GPU hosts rarely have the
/// toolkit where the linker looks, but often PyTorch's nvidia wheels: the
/// library is found at run time rather than linked (as IREE and PyTorch
/// itself find theirs).
struct CuBLAS {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) setStream = nullptr;
  /// cublasGemmStridedBatchedEx (overloaded in C++: its compute-type
  /// form), which every GEMM of the engine calls.
  cublasStatus_t (*gemmStridedBatchedEx)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
      const void *, const void *, cudaDataType, int, long long, const void *,
      cudaDataType, int, long long, const void *, void *, cudaDataType, int,
      long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;

  /// Loads libcublas (loadCUDALibrary: $DTC_CUBLAS, nvidia/cublas).
  /// "" or what was tried.
  std::string load();
};

} // namespace mlir::dtc

#endif // DTC_LIB_RUNTIME_CUDA_CUBLAS_H

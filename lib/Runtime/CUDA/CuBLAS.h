//===- CuBLAS.h - cuBLAS, loaded at run time --------------------*- C++ -*-===//

#ifndef DTC_LIB_RUNTIME_CUDA_CUBLAS_H
#define DTC_LIB_RUNTIME_CUDA_CUBLAS_H

#include <cublas_v2.h>

#include <string>

namespace mlir::dtc {

/// The cuBLAS entry points the engine calls. GPU hosts rarely have the
/// toolkit where the linker looks, but often PyTorch's nvidia wheels: the
/// library is found at run time rather than linked (as IREE and PyTorch
/// itself find theirs).
struct CuBLAS {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) setStream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasDgemm_v2) dgemm = nullptr;
  /// cublasGemmEx (overloaded in C++: its compute-type form).
  cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                           int, int, int, const void *, const void *,
                           cudaDataType, int, const void *, cudaDataType, int,
                           const void *, void *, cudaDataType, int,
                           cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  /// Where it was loaded from.
  std::string path;

  /// Loads libcublas from, in order: $DTC_CUBLAS (a file), the loader's
  /// search (LD_LIBRARY_PATH, this launcher's rpath: the toolkit it was
  /// built with), $CUDA_HOME/lib64, and the nvidia/cublas/lib of Python
  /// installations (site- and dist-packages under /usr, /usr/local,
  /// $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local). "" or what was tried.
  std::string load();
};

} // namespace mlir::dtc

#endif // DTC_LIB_RUNTIME_CUDA_CUBLAS_H

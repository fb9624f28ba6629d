//===- CuBLAS.h - cuBLAS, loaded at run time --------------------*- C++ -*-===//

#ifndef DTC_LIB_RUNTIME_CUDA_CUBLAS_H
#define DTC_LIB_RUNTIME_CUDA_CUBLAS_H

#include <cublas_v2.h>

#include <string>

namespace mlir::dtc {

/// The cuBLAS entry points the engine calls, found at run time
/// (CUDALibraries.h).
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

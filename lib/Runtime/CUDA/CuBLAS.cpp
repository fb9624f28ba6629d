//===- CuBLAS.cpp - cuBLAS, loaded at run time ----------------------------===//

#include "CuBLAS.h"

#include "CUDALibraries.h"

#include <dlfcn.h>

using namespace mlir::dtc;

std::string CuBLAS::load() {
  std::string tried;
  void *library = loadCUDALibrary(
      "DTC_CUBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"},
      "cublas", tried);
  if (!library)
    return "cannot load cuBLAS (set DTC_CUBLAS to libcublas.so's path); "
           "tried:" +
           tried;
  create =
      reinterpret_cast<decltype(create)>(dlsym(library, "cublasCreate_v2"));
  destroy =
      reinterpret_cast<decltype(destroy)>(dlsym(library, "cublasDestroy_v2"));
  setStream = reinterpret_cast<decltype(setStream)>(
      dlsym(library, "cublasSetStream_v2"));
  gemmStridedBatchedEx = reinterpret_cast<decltype(gemmStridedBatchedEx)>(
      dlsym(library, "cublasGemmStridedBatchedEx"));
  if (!create || !destroy || !setStream || !gemmStridedBatchedEx)
    return "the cuBLAS loaded lacks an entry point dtc calls";
  return "";
}

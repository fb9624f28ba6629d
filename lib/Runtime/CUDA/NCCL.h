//===- NCCL.h - NCCL, loaded at run time ------------------------*- C++ -*-===//

#ifndef DTC_LIB_RUNTIME_CUDA_NCCL_H
#define DTC_LIB_RUNTIME_CUDA_NCCL_H

#include <nccl.h>

#include <string>

namespace mlir::dtc {

/// The NCCL entry points the engine calls, found at run time as cuBLAS is
/// (loadCUDALibrary: $DTC_NCCL, nvidia/nccl): a single rank needs none.
struct NCCL {
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommSplit) commSplit = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclAllGather) allGather = nullptr;
  decltype(&ncclReduceScatter) reduceScatter = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) groupStart = nullptr;
  decltype(&ncclGroupEnd) groupEnd = nullptr;
  decltype(&ncclGetErrorString) errorString = nullptr;

  /// "" or what was tried.
  std::string load();
};

} // namespace mlir::dtc

#endif // DTC_LIB_RUNTIME_CUDA_NCCL_H

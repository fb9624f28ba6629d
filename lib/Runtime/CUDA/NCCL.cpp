//===- NCCL.cpp - NCCL, loaded at run time --------------------------------===//

#include "NCCL.h"

#include "CUDALibraries.h"

#include <dlfcn.h>

using namespace mlir::dtc;

std::string NCCL::load() {
  std::string tried;
  void *library = loadCUDALibrary("DTC_NCCL", {"libnccl.so.2", "libnccl.so"},
                                  "nccl", tried);
  if (!library)
    return "cannot load NCCL (set DTC_NCCL to libnccl.so's path); tried:" +
           tried;
  bool all = true;
  auto find = [&](auto &entry, const char *name) {
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(
        dlsym(library, name));
    all = all && entry;
  };
  find(getUniqueId, "ncclGetUniqueId");
  find(commInitRank, "ncclCommInitRank");
  find(commSplit, "ncclCommSplit");
  find(commDestroy, "ncclCommDestroy");
  find(allReduce, "ncclAllReduce");
  find(allGather, "ncclAllGather");
  find(reduceScatter, "ncclReduceScatter");
  find(broadcast, "ncclBroadcast");
  find(send, "ncclSend");
  find(recv, "ncclRecv");
  find(groupStart, "ncclGroupStart");
  find(groupEnd, "ncclGroupEnd");
  find(errorString, "ncclGetErrorString");
  return all ? ""
             : "the NCCL loaded lacks an entry point dtc calls (NCCL "
               "2.18 or newer has them all)";
}

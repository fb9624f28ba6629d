//===- CUDAEngine.h - running a compiled program on a GPU -------*- C++ -*-===//
//
// What `dtc-launch-cuda` runs: a program dtc-compile --target cuda wrote.
// The engine allocates one device buffer per argument and per result and
// one arena for every intermediate value (the static plan's size) when it
// starts, loads kernels.fatbin (the CUDA runtime's library API: no
// compiler where it runs), runs the first step's thunks as they are
// enqueued and records the second's into a CUDA graph on one stream: each
// kernel launch, each GEMM on cuBLAS, each copy, and each donated
// argument's update copied back into its buffer (the graph's addresses stay
// fixed). Every later step replays the graph. cuBLAS is loaded at run
// time from the system or a PyTorch installation's nvidia/*/lib
// (CUDALibraries.h). On a mesh (`comm`, MPI's, for the training loop's host
// traffic) every collective runs on NCCL over device buffers: a
// communicator per group of axes split from the world's, each collective
// on a communication stream after the compute before it, a started one
// waited for only at its `wait`; NCCL too is found at run time.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_CUDA_CUDAENGINE_H
#define DTC_RUNTIME_CUDA_CUDAENGINE_H

#include "dtc/Runtime/CompiledProgram.h"

#include <memory>

namespace mlir::dtc {

class Communicator;

/// The engine of `program`, loaded from `dir`, on this rank's GPU (of
/// `comm`'s mesh; null: one device); null with `error` set when there is
/// none, the fatbin does not load, or cuBLAS or NCCL is not found. With
/// `profile`, the second step runs its thunks one by one between events
/// (before the third captures the graph) and rank 0 prints the `profile`
/// slowest, each with its time and, for GEMMs and fused attention, its
/// TFLOP/s.
std::unique_ptr<StepEngine>
createCUDAEngine(const CompiledProgram &program, const std::string &dir,
                 Communicator *comm, std::string &error, int profile = 0);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_CUDA_CUDAENGINE_H

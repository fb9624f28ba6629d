//===- NCCLCommunicator.h - the NCCL engine of the Communicator -*- C++ -*-===//
//
// Collectives on GPUs through NCCL, bootstrapped over MPI. A library of its
// own (DTCCommunicatorNCCL), built only where CUDA and NCCL are found
// (DTC_HAVE_NCCL), so that nothing else needs either.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_NCCL_NCCLCOMMUNICATOR_H
#define DTC_RUNTIME_NCCL_NCCLCOMMUNICATOR_H

#include "dtc/Runtime/Communicator.h"

namespace mlir::dtc {

/// The NCCL engine (MPI must be initialized; one GPU per rank, rank modulo
/// the visible devices). Fails with `error` without a CUDA device or when
/// the world size does not match the mesh.
std::unique_ptr<Communicator> createNCCLCommunicator(const MeshShape &mesh,
                                                     std::string &error);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_NCCL_NCCLCOMMUNICATOR_H

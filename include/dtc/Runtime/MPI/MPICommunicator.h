//===- MPICommunicator.h - the MPI engine of the Communicator ---*- C++ -*-===//
//
// Collectives on host tensors over MPI, for the reference executor under
// mpirun. A library of its own (DTCCommunicatorMPI), linked only by what
// runs collectives on CPUs: dtc-run and the communicator tests. The
// compiler tools link the Communicator interface alone and never MPI.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_MPI_MPICOMMUNICATOR_H
#define DTC_RUNTIME_MPI_MPICOMMUNICATOR_H

#include "dtc/Runtime/Communicator.h"

namespace mlir::dtc {

/// The MPI engine (MPI must be initialized). The world size must equal the
/// mesh's device count; `error` says so otherwise.
std::unique_ptr<Communicator> createMPICommunicator(const MeshShape &mesh,
                                                    std::string &error);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_MPI_MPICOMMUNICATOR_H

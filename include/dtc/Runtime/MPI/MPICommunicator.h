//===- MPICommunicator.h - the MPI engine of the Communicator ---*- C++ -*-===//
//
// Collectives on host tensors over MPI, for the engines under mpirun. A
// library of its own (DTCCommunicatorMPI), linked only by what runs
// collectives on CPUs: dtc-run, dtc-launch and the communicator tests.
// The compiler tools link the Communicator interface alone and never MPI.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_MPI_MPICOMMUNICATOR_H
#define DTC_RUNTIME_MPI_MPICOMMUNICATOR_H

#include "dtc/Runtime/Communicator.h"

#include <functional>

namespace mlir::dtc {

/// The MPI engine (MPI must be initialized). The world size must equal the
/// mesh's device count; `error` says so otherwise.
std::unique_ptr<Communicator> createMPICommunicator(const MeshShape &mesh,
                                                    std::string &error);

/// Runs `body` on this process's rank of `mesh`, as mpirun launched it:
/// initializes MPI, makes the communicator (or prints, on rank 0, why the
/// launched ranks cannot run the mesh), and finalizes MPI after. A rank
/// whose body fails aborts the others, which may be waiting in a
/// collective (unless it returns kEveryRankFailed). Returns the process
/// exit status.
int runOnMPIRanks(int &argc, char **&argv, const MeshShape &mesh,
                  const std::function<int(Communicator *)> &body);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_MPI_MPICOMMUNICATOR_H

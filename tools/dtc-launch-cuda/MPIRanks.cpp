//===- MPIRanks.cpp - dtc-launch-cuda's ranks under mpirun ----------------===//
//
// libdtc-launch-cuda-mpi.so: what dtc-launch-cuda loads only for a program
// of more than one rank, so that the launcher itself needs no MPI (a GPU
// host running one rank may have none). It starts the rank as dtc-launch
// does (runOnMPIRanks) and hands the body MPI's communicator, which the
// training loop's host traffic and NCCL's bootstrap use.
//
//===----------------------------------------------------------------------===//

#include "dtc/Runtime/MPI/MPICommunicator.h"

extern "C" int dtc_launch_cuda_run_on_mpi_ranks(
    int &argc, char **&argv, const mlir::dtc::MeshShape &mesh,
    const std::function<int(mlir::dtc::Communicator *)> &body) {
  return mlir::dtc::runOnMPIRanks(argc, argv, mesh, body);
}

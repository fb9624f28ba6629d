//===- SimulatedCommunicator.h - every rank in one process ------*- C++ -*-===//
//
// The in-process engine: the ranks of a mesh are threads of one process
// and their collectives meet in shared memory. dtc-compile --verify runs
// a per-rank program on it, every rank on the reference executor, without
// mpirun. Every rank calls the same collectives in the same order (SPMD),
// so each call is a rendezvous of the whole world: every rank leaves its
// bytes, and once all have, each computes its own result from them.
//
// When one rank fails it calls abort(): the others' collectives return at
// once (with zeros) instead of waiting, so every thread can finish.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_RUNTIME_SIMULATED_SIMULATEDCOMMUNICATOR_H
#define DTC_RUNTIME_SIMULATED_SIMULATEDCOMMUNICATOR_H

#include "dtc/Runtime/Communicator.h"

#include <functional>
#include <memory>
#include <vector>

namespace mlir::dtc {

class SimulatedWorld;

/// The communicators of every rank of `mesh`, sharing one world: hand
/// communicator r to the thread that runs rank r.
std::vector<std::unique_ptr<Communicator>>
createSimulatedCommunicators(const MeshShape &mesh);

/// Runs `body` on every rank of `mesh`, each a thread with its simulated
/// communicator, and waits for all of them.
void runSimulatedRanks(const MeshShape &mesh,
                       const std::function<void(Communicator &)> &body);

/// Stops the world of `comm` (a simulated communicator): its pending and
/// later collectives return at once.
void abortSimulatedWorld(Communicator &comm);

} // namespace mlir::dtc

#endif // DTC_RUNTIME_SIMULATED_SIMULATEDCOMMUNICATOR_H

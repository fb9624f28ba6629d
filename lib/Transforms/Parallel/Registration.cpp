//===- Registration.cpp - registering the parallelism passes --------------===//

#include "dtc/Transforms/Parallel/Passes.h"

namespace mlir::dtc {
#define GEN_PASS_REGISTRATION
#include "dtc/Transforms/Parallel/Passes.h.inc"
} // namespace mlir::dtc

void mlir::dtc::registerParallelPasses() { registerDTCParallelPasses(); }

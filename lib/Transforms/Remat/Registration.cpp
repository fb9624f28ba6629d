//===- Registration.cpp - registering the rematerialization pass ----------===//

#include "dtc/Transforms/Remat/Passes.h"

namespace mlir::dtc {
#define GEN_PASS_REGISTRATION
#include "dtc/Transforms/Remat/Passes.h.inc"
} // namespace mlir::dtc

void mlir::dtc::registerRematPasses() { registerDTCRematPasses(); }

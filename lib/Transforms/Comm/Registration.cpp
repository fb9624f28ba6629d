//===- Registration.cpp - registering the communication passes ------------===//

#include "dtc/Transforms/Comm/Passes.h"

namespace mlir::dtc {
#define GEN_PASS_REGISTRATION
#include "dtc/Transforms/Comm/Passes.h.inc"
} // namespace mlir::dtc

void mlir::dtc::registerCommPasses() { registerDTCCommPasses(); }

//===- Registration.cpp - registering the training passes -----------------===//

#include "dtc/Transforms/Training/Passes.h"

namespace mlir::dtc {
#define GEN_PASS_REGISTRATION
#include "dtc/Transforms/Training/Passes.h.inc"
} // namespace mlir::dtc

void mlir::dtc::registerTrainingPasses() { registerDTCTrainingPasses(); }

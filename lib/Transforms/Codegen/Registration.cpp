//===- Registration.cpp - registering the code generation passes ----------===//

#include "dtc/Transforms/Codegen/Passes.h"

namespace mlir::dtc {
#define GEN_PASS_REGISTRATION
#include "dtc/Transforms/Codegen/Passes.h.inc"
} // namespace mlir::dtc

void mlir::dtc::registerCodegenPasses() { registerDTCCodegenPasses(); }

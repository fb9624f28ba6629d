//===- Passes.h - training-step passes --------------------------*- C++ -*-===//
//
// The passes that build a training step from a forward function
// (dtc-attach-loss, dtc-autodiff, dtc-optimizer) and the attribute names
// they use to mark what a runner must feed and keep.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_TRAINING_PASSES_H
#define DTC_TRANSFORMS_TRAINING_PASSES_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Transforms/Options.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "dtc/Transforms/Training/Passes.h.inc"

/// Registers the training passes (for dtc-opt).
void registerTrainingPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_TRAINING_PASSES_H

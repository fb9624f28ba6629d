//===- StepVerifier.h - a per-rank program against one device ---*- C++ -*-===//
//
// dtc-compile --verify: the per-rank program of a mesh and the
// single-device step built from the same global step are run on seeded
// random parameters and inputs, every rank a thread of this process on the
// reference executor (Runtime/Simulated), and their losses, gradients and
// parameter updates compared within the training tests' tolerances. On a
// mismatch both run again recording every op's values, and the first op,
// in the per-rank program's order, whose ranks' parts fit no layout of the
// single-device value (replicated, split along dimensions over mesh axes,
// in blocks, or a partial sum) is named, with the collectives that fed it.
//
// Ops of the two programs are matched by a tag that the caller puts in
// every op's location before the per-rank passes run (tagOps), and
// removes before it writes anything (stripTags): locations are not part of
// the printed step, and the passes neither read nor compare them.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_VERIFICATION_STEPVERIFIER_H
#define DTC_VERIFICATION_STEPVERIFIER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dtc {

struct StepVerifyOptions {
  /// Seeds the parameters' perturbation and the inputs.
  uint64_t seed = 0;
  /// The parameters start at their values plus this fraction of their RMS
  /// (at least 0.02) of noise, so that ones and zeros hide nothing.
  double noise = 0.1;
  /// The training tests' tolerances: the loss (relative), each gradient
  /// and each parameter's update (relative L2).
  double lossRtol = 1e-5, gradRl2 = 1e-4, updateRl2 = 1e-3;
  /// Within which (relative L2 to the whole value) a rank's part of an
  /// intermediate value counts as matching, when looking for the first
  /// wrong op.
  double valueRl2 = 1e-3;
};

/// Tags every op of `module`'s functions (in its location) so that their
/// copies and rewrites in other modules can be matched.
void tagOps(ModuleOp module);
/// Removes the tags.
void stripTags(ModuleOp module);

/// Runs `rankProgram` (on its mesh, simulated) and `singleDevice` (the
/// same global step for one device) on the same random starting values and
/// compares them. Prints what it ran and found to `log`; fails with an
/// error on `rankProgram` naming the first mismatch, or when either
/// cannot run.
LogicalResult verifyRankProgram(func::FuncOp singleDevice,
                                func::FuncOp rankProgram,
                                const StepVerifyOptions &options,
                                llvm::raw_ostream &log);

} // namespace mlir::dtc

#endif // DTC_VERIFICATION_STEPVERIFIER_H

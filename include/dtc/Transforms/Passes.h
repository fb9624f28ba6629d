//===- Passes.h - dtc passes and pipelines ----------------------*- C++ -*-===//
//
// The dtc passes (declared in Passes.td, one file each under lib/Transforms)
// and the pipelines that chain them. `registerDTCPasses()` makes all of them
// available to dtc-opt.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_PASSES_H
#define DTC_TRANSFORMS_PASSES_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "dtc/Transforms/Options.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "dtc/Transforms/Passes.h.inc"

/// Options of the `dtc-simplify` pipeline.
struct SimplifyPipelineOptions
    : public PassPipelineOptions<SimplifyPipelineOptions> {
  Option<int64_t> maxConstantElements{
      *this, "max-constant-elements",
      llvm::cl::desc("Largest value constant folding evaluates, in elements "
                     "(splats fold whatever their size)"),
      llvm::cl::init(kMaxFoldedElements)};
};

/// Folds constant subgraphs, canonicalizes and removes common
/// subexpressions: the clean-up an imported model gets before training
/// passes see it.
void buildSimplifyPipeline(OpPassManager &pm,
                           const SimplifyPipelineOptions &options);

/// Options of the `dtc-training` pipeline, declared in
/// TrainingOptions.def (which dtc-compile's command line shares).
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
#define DTC_TRAINING_OPTION(GROUP, TYPE, NAME, FLAG, HELP, ...)                \
  Option<TYPE> NAME{*this, FLAG, llvm::cl::desc(HELP), __VA_ARGS__};
#include "dtc/Transforms/TrainingOptions.def"

  /// What is wrong with the options together (an axis the mesh cannot
  /// have, an option that needs another), or "" when nothing is. Options
  /// are named as flags (`--zero`) when `asFlags`, else as pipeline
  /// options.
  std::string check(bool asFlags = false) const;
  /// The microbatches a step runs: --microbatches or --grad-accum.
  int64_t getMicrobatches() const;

private:
  std::string checkPipeline(bool asFlags) const;
};

/// Builds the training step from a forward function and partitions it
/// over the mesh: the global step (loss, autodiff, mixed precision; ended
/// by dtc-verify-global-step), then the per-rank program (parallelism,
/// accumulation, bucketing, optimizer, ZeRO; ended by
/// dtc-verify-rank-program). The order and its reasons: Pipelines.cpp.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);
/// Its two halves, for a caller that looks at the global step between
/// them (dtc-compile --verify): the global step, then the per-rank
/// program. With no mesh the second half builds the single-device step.
void buildGlobalStepPipeline(OpPassManager &pm,
                             const TrainingPipelineOptions &options);
void buildRankProgramPipeline(OpPassManager &pm,
                              const TrainingPipelineOptions &options);

/// Registers every dtc pass and pipeline (for dtc-opt).
void registerDTCPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_PASSES_H

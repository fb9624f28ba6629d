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
      llvm::cl::desc("Largest folded result to materialize, in elements"),
      llvm::cl::init(1 << 20)};
};

/// Folds constant subgraphs, canonicalizes and removes common
/// subexpressions: the clean-up an imported model gets before training
/// passes see it.
void buildSimplifyPipeline(OpPassManager &pm,
                           const SimplifyPipelineOptions &options);

/// Registers every dtc pass and pipeline (for dtc-opt).
void registerDTCPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_PASSES_H

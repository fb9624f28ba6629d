//===- Passes.h - code generation passes ------------------------*- C++ -*-===//
//
// The target-independent passes between the per-rank program and a
// backend's kernels: folds into matmuls, softmaxes and norms written out,
// fusion.
//
//===----------------------------------------------------------------------===//

#ifndef DTC_TRANSFORMS_CODEGEN_PASSES_H
#define DTC_TRANSFORMS_CODEGEN_PASSES_H

#include "dtc/Dialect/DTC/IR/DTCDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dtc {

#define GEN_PASS_DECL
#include "dtc/Transforms/Codegen/Passes.h.inc"

/// Registers the code generation passes (for dtc-opt).
void registerCodegenPasses();

} // namespace mlir::dtc

#endif // DTC_TRANSFORMS_CODEGEN_PASSES_H
